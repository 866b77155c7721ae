package orbitkv.membership.etcd;

import io.etcd.jetcd.ByteSequence;
import java.nio.charset.StandardCharsets;

/**
 * The etcd key layout under the guard prefix {@code /orbitkv/v2/<cluster>/} (DESIGN §3, MEM-1, MEM-4):
 * {@code format}, {@code epochs/<node_id>}, {@code members/<node_id>}, plus the epoch floor
 * {@code epochs/@floor} written only by {@code prune-epochs} (MEM-5). {@code @} is not allowed in a node
 * id, so the floor can never alias a node's epoch key. Every other key under the prefix is an old
 * block/publisher key that cutover retires.
 */
public final class Keys {
    static final String FLOOR_NAME = "@floor";

    private final String prefix;

    public Keys(String prefix) {
        if (!prefix.startsWith("/orbitkv/v2/") || !prefix.endsWith("/")) {
            throw new IllegalArgumentException("key prefix must be /orbitkv/v2/<cluster>/, got " + prefix);
        }
        this.prefix = prefix;
    }

    public String prefix() {
        return prefix;
    }

    public String format() {
        return prefix + "format";
    }

    public String epochsPrefix() {
        return prefix + "epochs/";
    }

    public String epoch(String nodeId) {
        return epochsPrefix() + nodeId;
    }

    public String epochFloor() {
        return epochsPrefix() + FLOOR_NAME;
    }

    public String membersPrefix() {
        return prefix + "members/";
    }

    public String member(String nodeId) {
        return membersPrefix() + nodeId;
    }

    /** The kind of a key under the prefix. */
    enum Kind { FORMAT, EPOCH, EPOCH_FLOOR, MEMBER, OTHER }

    Kind kindOf(String key) {
        if (key.equals(format())) {
            return Kind.FORMAT;
        }
        if (key.equals(epochFloor())) {
            return Kind.EPOCH_FLOOR;
        }
        if (key.startsWith(epochsPrefix()) && key.length() > epochsPrefix().length()) {
            return Kind.EPOCH;
        }
        if (key.startsWith(membersPrefix()) && key.length() > membersPrefix().length()) {
            return Kind.MEMBER;
        }
        return Kind.OTHER;
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    static String text(ByteSequence b) {
        return b.toString(StandardCharsets.UTF_8);
    }

    /** The smallest key greater than every key starting with {@code prefix} (etcd range end). */
    static ByteSequence rangeEnd(String prefix) {
        byte[] b = prefix.getBytes(StandardCharsets.UTF_8);
        for (int i = b.length - 1; i >= 0; i--) {
            if (b[i] != (byte) 0xff) {
                byte[] end = java.util.Arrays.copyOf(b, i + 1);
                end[i]++;
                return ByteSequence.from(end);
            }
        }
        return ByteSequence.from(new byte[] {0});
    }
}
