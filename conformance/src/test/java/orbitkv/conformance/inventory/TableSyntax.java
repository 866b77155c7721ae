package orbitkv.conformance.inventory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StateKey;
import orbitkv.testing.TableRows;

/**
 * The shared syntax of the inventory tables (documented in each table file's header): rows, configs,
 * mutations, scopes and records. Parsing only; no behaviour of the code under test is assumed here.
 */
public final class TableSyntax {
    private TableSyntax() {}

    static List<TableRows.Row> rows(String file, int columnCount) throws IOException {
        return rows("inventory", file, columnCount);
    }

    /** The rows of {@code src/test/resources/tables/<dir>/<file>} ({@link TableRows}: columns, rule IDs, lines). */
    public static List<TableRows.Row> rows(String dir, String file, int columnCount) throws IOException {
        return TableRows.read(Path.of(System.getProperty("basedir", "."), "src/test/resources/tables", dir, file), columnCount);
    }

    /** {@code -} or space-separated {@code name=value} overrides of {@link InventoryConfig#defaults()}. */
    static InventoryConfig config(String text) {
        InventoryConfig c = InventoryConfig.defaults();
        if (text.equals("-")) {
            return c;
        }
        for (String kv : text.split("\\s+")) {
            String[] p = kv.split("=", 2);
            long v = Long.parseLong(p[1]);
            c = switch (p[0]) {
                case "inputRecordsMax" -> c.withInputRecordsMax((int) v);
                case "inputBytesMax" -> c.withInputBytesMax(v);
                case "frameEncodedBytesMax" -> c.withFrameEncodedBytesMax((int) v);
                case "frameDecodedBytesMax" -> c.withFrameDecodedBytesMax((int) v);
                case "journalRecordsMax" -> c.withJournalRecordsMax((int) v);
                case "journalBytesMax" -> c.withJournalBytesMax(v);
                case "pageRecordsMax" -> c.withPageRecordsMax((int) v);
                case "pageBytesMax" -> c.withPageBytesMax(v);
                default -> throw new IllegalArgumentException("unknown config setting " + p[0]);
            };
        }
        return c;
    }

    /** A mutation of a table row. */
    public sealed interface Mutation permits Put, Del, Absent {}

    public record Put(StateKey key, Medium medium, long size) implements Mutation {}

    public record Del(StateKey key, Medium medium) implements Mutation {}

    /** A delete the row expects to be refused as NotResident (consuming no sequence). */
    public record Absent(StateKey key, Medium medium) implements Mutation {}

    /** {@code ;}-separated mutations ({@code -} for none), with the {@code fill NS COUNT KEYBYTES} macro expanded. */
    public static List<Mutation> mutations(String text) {
        List<Mutation> out = new ArrayList<>();
        if (text.equals("-")) {
            return out;
        }
        for (String step : text.split(";")) {
            out.addAll(mutation(step.strip()));
        }
        return out;
    }

    static boolean isMutation(String step) {
        String op = step.split("\\s+")[0];
        return op.equals("put") || op.equals("del") || op.equals("absent") || op.equals("fill");
    }

    static List<Mutation> mutation(String step) {
        String[] t = step.split("\\s+");
        return switch (t[0]) {
            case "put" -> List.of(new Put(stateKey(t[1]), Medium.valueOf(t[2]), Long.parseLong(t[3])));
            case "del" -> List.of(new Del(stateKey(t[1]), Medium.valueOf(t[2])));
            case "absent" -> List.of(new Absent(stateKey(t[1]), Medium.valueOf(t[2])));
            case "fill" -> fill(namespace(t[1]), Integer.parseInt(t[2]), Integer.parseInt(t[3]));
            default -> throw new IllegalArgumentException("unknown mutation '" + step + "'");
        };
    }

    /** COUNT puts in DRAM of size 1, keys = big-endian counter 0..COUNT-1 in KEYBYTES bytes. */
    private static List<Mutation> fill(Namespace ns, int count, int keyBytes) {
        List<Mutation> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            byte[] key = new byte[keyBytes];
            for (int b = 0; b < Math.min(4, keyBytes); b++) {
                key[keyBytes - 1 - b] = (byte) (i >>> (8 * b));
            }
            out.add(new Put(new StateKey(ns, key), Medium.DRAM, 1));
        }
        return out;
    }

    /** {@code NS/HEX}; {@code x*8} repeats text, {@code ab*64} repeats a hex byte. */
    public static StateKey stateKey(String text) {
        int slash = text.indexOf('/');
        return new StateKey(namespace(text.substring(0, slash)), keyBytes(text.substring(slash + 1)));
    }

    static Namespace namespace(String text) {
        int star = text.indexOf('*');
        return Namespace.utf8(star < 0 ? text : text.substring(0, star).repeat(Integer.parseInt(text.substring(star + 1))));
    }

    private static byte[] keyBytes(String text) {
        int star = text.indexOf('*');
        String hex = star < 0 ? text : text.substring(0, star).repeat(Integer.parseInt(text.substring(star + 1)));
        return HexFormat.of().parseHex(hex);
    }

    /** {@code *} = all namespaces, {@code none} = the empty explicit scope, else comma-separated namespaces. */
    static Scope scope(String text) {
        if (text.equals("*")) {
            return Scope.all();
        }
        if (text.equals("none")) {
            return Scope.none();
        }
        List<Namespace> ns = new ArrayList<>();
        for (String n : text.split(",")) {
            ns.add(namespace(n));
        }
        return Scope.of(ns);
    }

    /** {@code put:NS/KEY:MEDIUM@SEQ=SIZE} or {@code del:NS/KEY:MEDIUM@SEQ}. */
    static ResidenceRecord record(String text) {
        String[] p = text.split(":");
        String[] mediumSeq = p[2].split("@");
        Medium medium = Medium.valueOf(mediumSeq[0]);
        if (p[0].equals("del")) {
            return ResidenceRecord.delete(stateKey(p[1]), medium, Long.parseLong(mediumSeq[1]));
        }
        String[] seqSize = mediumSeq[1].split("=");
        return ResidenceRecord.put(stateKey(p[1]), medium, Long.parseLong(seqSize[0]), Long.parseLong(seqSize[1]));
    }

    /** {@code name=value} options of a read column. */
    public static java.util.Map<String, String> options(String text) {
        java.util.Map<String, String> out = new java.util.HashMap<>();
        for (String kv : text.split("\\s+")) {
            String[] p = kv.split("=", 2);
            out.put(p[0], p.length > 1 ? p[1] : "");
        }
        return out;
    }
}
