package orbitkv.conformance.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import orbitkv.inventory.CoalescedInterval;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.JournalStatus;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.ReadOutcome;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.testing.TableRows;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs {@code tables/inventory/source-intervals.table} (coalescing, partitioning, journal retention)
 * through the exported {@link InventorySource} API only. Besides each row's expected tokens, every
 * successful read is checked structurally (contiguous coverage from the cursor, input bound, frame bounds
 * by the suite's own wire encoding) and semantically against {@link ResidenceModel}.
 */
@Tag("unit")
class SourceIntervalTableTest {
    static final String TABLE = "source-intervals.table";

    @TestFactory
    @DisplayName("PUB-1 PUB-6 PUB-7 PUB-8 DELTA-1 DELTA-3 BND-5 source interval table")
    Stream<DynamicTest> rows() throws IOException {
        List<TableRows.Row> rows = TableSyntax.rows(TABLE, 4);
        assertThat(rows).hasSizeGreaterThanOrEqualTo(40);
        return rows.stream().map(row -> DynamicTest.dynamicTest(row.name(), () -> run(row)));
    }

    static void apply(InventorySource source, ResidenceModel model, TableSyntax.Mutation m) {
        switch (m) {
            case TableSyntax.Put p -> {
                ResidenceRecord expected = model.put(p.key(), p.medium(), p.size());
                MutationResult r = source.put(p.key(), p.medium(), p.size());
                assertThat(r).isInstanceOf(MutationResult.Recorded.class);
                assertThat(((MutationResult.Recorded) r).record()).isEqualTo(expected);
            }
            case TableSyntax.Del d -> {
                ResidenceRecord expected = model.delete(d.key(), d.medium());
                assertThat(expected).as("table deletes a resident residence").isNotNull();
                MutationResult r = source.delete(d.key(), d.medium());
                assertThat(r).isInstanceOf(MutationResult.Recorded.class);
                assertThat(((MutationResult.Recorded) r).record()).isEqualTo(expected);
            }
            case TableSyntax.Absent a -> {
                assertThat(model.delete(a.key(), a.medium())).as("table expects NotResident").isNull();
                assertThat(source.delete(a.key(), a.medium())).isEqualTo(new MutationResult.NotResident(a.key(), a.medium()));
            }
        }
    }

    private static void run(TableRows.Row row) {
        InventoryConfig config = TableSyntax.config(row.column(0));
        InventorySource source = InventorySource.create(config);
        ResidenceModel model = new ResidenceModel();
        for (TableSyntax.Mutation m : TableSyntax.mutations(row.column(1))) {
            apply(source, model, m);
        }
        Map<String, String> read = TableSyntax.options(row.column(2));
        long from = Long.parseLong(read.get("from"));
        Scope scope = TableSyntax.scope(read.getOrDefault("scope", "*"));
        int max = Integer.parseInt(read.getOrDefault("max", "1000000"));
        ReadOutcome outcome = read.containsKey("through")
                ? source.read(from, Long.parseLong(read.get("through")), scope, max)
                : source.read(from, scope, max);
        if (outcome instanceof ReadOutcome.Intervals iv) {
            checkIntervals(config, model, from, scope, iv.intervals());
        }
        checkExpected(row.column(3), outcome, source.status());
    }

    /** Structure and meaning of every successful read, independent of the row's tokens. */
    static void checkIntervals(InventoryConfig config, ResidenceModel model, long from, Scope scope, List<CoalescedInterval> intervals) {
        ResidenceModel.View view = new ResidenceModel.View(model.mapAt(from, scope));
        long cursor = from;
        for (CoalescedInterval ci : intervals) {
            assertThat(ci.interval().from()).as("contiguous coverage (INV-4)").isEqualTo(cursor);
            assertThat(ci.interval().to()).as("within head").isLessThanOrEqualTo(model.head());
            if (!ci.records().isEmpty()) {
                assertThat(ci.interval().length()).as("input interval bound (PUB-1)").isLessThanOrEqualTo(config.inputRecordsMax());
                long inputBytes = 0;
                for (long s = ci.interval().from() + 1; s <= ci.interval().to(); s++) {
                    inputBytes += ResidenceModel.entryBytes(model.history.get((int) s - 1));
                }
                assertThat(ci.interval().length() == 1 || inputBytes <= config.inputBytesMax()).as("input bytes bound").isTrue();
            }
            assertThat(WireFrames.frameBytes(ci)).as("encoded frame bound (SES-10)").isLessThanOrEqualTo(config.frameEncodedBytesMax());
            assertThat(WireFrames.decodedBytes(ci)).as("decoded frame bound (SES-10)").isLessThanOrEqualTo(config.frameDecodedBytesMax());
            for (ResidenceRecord r : ci.records()) {
                assertThat(scope.contains(r.key().namespace())).as("scope filter").isTrue();
                assertThat(model.history.get((int) r.sequence() - 1)).as("record keeps its own sequence (DELTA-6)").isEqualTo(r);
            }
            view.apply(ci);
            cursor = ci.interval().to();
            assertThat(view.rows).as("view after " + ci.interval()).isEqualTo(model.mapAt(cursor, scope));
        }
    }

    private static void checkExpected(String expected, ReadOutcome outcome, JournalStatus status) {
        List<String> intervalTokens = new ArrayList<>();
        for (String token : expected.split("\\s+")) {
            if (token.startsWith("(")) {
                intervalTokens.add(token);
            } else if (token.equals("none")) {
                assertThat(outcome).isEqualTo(new ReadOutcome.Intervals(List.of()));
            } else if (token.startsWith("trimmed(")) {
                long oldest = Long.parseLong(arg(token, "oldest"));
                assertThat(outcome).isInstanceOfSatisfying(ReadOutcome.Trimmed.class,
                        t -> assertThat(t.oldestRetainedSequence()).isEqualTo(oldest));
            } else if (token.startsWith("too-large(")) {
                long seq = Long.parseLong(arg(token, "seq"));
                ReadOutcome.FrameBound bound = ReadOutcome.FrameBound.valueOf("FRAME_" + arg(token, "bound") + "_BYTES_MAX");
                assertThat(outcome).isInstanceOfSatisfying(ReadOutcome.RecordTooLarge.class, t -> {
                    assertThat(t.sequence()).isEqualTo(seq);
                    assertThat(t.bound()).isEqualTo(bound);
                    assertThat(t.bytes()).isGreaterThan(t.boundBytes());
                });
            } else if (token.startsWith("beyond-head(")) {
                long head = Long.parseLong(arg(token, "head"));
                assertThat(outcome).isInstanceOfSatisfying(ReadOutcome.BeyondHead.class, b -> assertThat(b.headSequence()).isEqualTo(head));
            } else {
                checkStatus(token, status);
            }
        }
        if (!intervalTokens.isEmpty()) {
            assertThat(outcome).isInstanceOf(ReadOutcome.Intervals.class);
            List<CoalescedInterval> actual = ((ReadOutcome.Intervals) outcome).intervals();
            assertThat(actual).as("interval count").hasSize(intervalTokens.size());
            for (int i = 0; i < actual.size(); i++) {
                checkInterval(intervalTokens.get(i), actual.get(i));
            }
        }
    }

    private static void checkInterval(String token, CoalescedInterval actual) {
        int close = token.indexOf(']');
        String[] bounds = token.substring(1, close).split(",");
        assertThat(actual.interval().from()).as(token).isEqualTo(Long.parseLong(bounds[0]));
        assertThat(actual.interval().to()).as(token).isEqualTo(Long.parseLong(bounds[1]));
        String rest = token.substring(close + 1);
        if (rest.startsWith("#")) {
            assertThat(actual.records()).as(token).hasSize(Integer.parseInt(rest.substring(1)));
            return;
        }
        String body = rest.substring(1, rest.length() - 1);
        List<ResidenceRecord> expected = new ArrayList<>();
        if (!body.isEmpty()) {
            for (String r : body.split(",")) {
                expected.add(TableSyntax.record(r));
            }
        }
        assertThat(actual.records()).as(token).containsExactlyElementsOf(expected);
    }

    private static void checkStatus(String token, JournalStatus s) {
        String[] kv = token.split("=");
        long v = Long.parseLong(kv[1]);
        long actual = switch (kv[0]) {
            case "head" -> s.headSequence();
            case "oldest" -> s.oldestRetainedSequence();
            case "retained" -> s.retainedRecords();
            case "bytes" -> s.journalBytes();
            case "peak" -> s.journalPeakBytes();
            case "trimmed" -> s.trimmedRecords();
            default -> throw new IllegalArgumentException("unknown expected token " + token);
        };
        assertThat(actual).as(token).isEqualTo(v);
    }

    static String arg(String token, String name) {
        String inner = token.substring(token.indexOf('(') + 1, token.lastIndexOf(')'));
        for (String kv : inner.split(",")) {
            String[] p = kv.split("=");
            if (p[0].equals(name)) {
                return p[1];
            }
        }
        throw new IllegalArgumentException(token + " has no " + name);
    }
}
