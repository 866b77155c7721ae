package orbitkv.conformance.baseline;

import io.etcd.jetcd.ByteSequence;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;

/**
 * The etcd layout of the block publisher baseline, under its own root so that it can never be mistaken
 * for membership keys ({@code /orbitkv/v2/<cluster>/...}, MEM-4 holds for the product):
 *
 * <pre>
 * /orbitkv-baseline/&lt;cluster&gt;/b/&lt;owner&gt;/&lt;namespace hex&gt;/&lt;key hex&gt;/&lt;D|S&gt;  -> u64be sequence, u64be size  (one key per residence)
 * /orbitkv-baseline/&lt;cluster&gt;/c/&lt;owner&gt;                                       -> the stored cursor ({@link PublisherCursor})
 * </pre>
 */
public record BaselineKeys(String cluster) {
    public static final String ROOT = "/orbitkv-baseline/";

    public BaselineKeys {
        if (cluster == null || cluster.isEmpty() || cluster.contains("/")) {
            throw new IllegalArgumentException("cluster must be a non-empty name without '/', got " + cluster);
        }
    }

    public String prefix() {
        return ROOT + cluster + "/";
    }

    public String blockPrefix() {
        return prefix() + "b/";
    }

    public String blockPrefix(String owner) {
        return blockPrefix() + owner + "/";
    }

    public String cursorPrefix() {
        return prefix() + "c/";
    }

    public String cursor(String owner) {
        return cursorPrefix() + owner;
    }

    public String block(String owner, StateKey key, Medium medium) {
        return blockPrefix(owner) + HexFormat.of().formatHex(key.namespace().bytes()) + "/" + key.keyHex() + "/"
                + (medium == Medium.DRAM ? "D" : "S");
    }

    /** A block key's parts, or null when {@code key} is not a block key of this cluster. */
    public BlockKey parseBlock(String key) {
        if (!key.startsWith(blockPrefix())) {
            return null;
        }
        String[] p = key.substring(blockPrefix().length()).split("/");
        if (p.length != 4 || !(p[3].equals("D") || p[3].equals("S"))) {
            throw new IllegalArgumentException("malformed baseline block key: " + key);
        }
        StateKey k = new StateKey(new Namespace(HexFormat.of().parseHex(p[1])), HexFormat.of().parseHex(p[2]));
        return new BlockKey(p[0], k, p[3].equals("D") ? Medium.DRAM : Medium.SSD);
    }

    /** The owner of a cursor key, or null. */
    public String parseCursorOwner(String key) {
        return key.startsWith(cursorPrefix()) ? key.substring(cursorPrefix().length()) : null;
    }

    /** One residence key. */
    public record BlockKey(String owner, StateKey key, Medium medium) {}

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    static ByteSequence blockValue(long sequence, long sizeBytes) {
        return ByteSequence.from(ByteBuffer.allocate(16).putLong(sequence).putLong(sizeBytes).array());
    }

    /** {sequence, size} of a block value. */
    static long[] parseBlockValue(byte[] v) {
        if (v.length != 16) {
            throw new IllegalArgumentException("a baseline block value is 16 bytes, got " + v.length);
        }
        ByteBuffer b = ByteBuffer.wrap(v);
        return new long[] {b.getLong(), b.getLong()};
    }
}
