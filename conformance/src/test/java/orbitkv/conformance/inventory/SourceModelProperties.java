package orbitkv.conformance.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import orbitkv.inventory.CoalescedInterval;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ReadOutcome;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SnapshotScan;
import orbitkv.inventory.SnapshotScan.ReplayStep;
import orbitkv.inventory.SnapshotScan.ScanStep;
import orbitkv.inventory.StateKey;
import orbitkv.testing.SeededTries;
import orbitkv.testing.SeededTries.Gen;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Random mutation histories against the independent {@link ResidenceModel} (seeded tries: a failure prints
 * its seed and input; {@code -Dorbitkv.seed=S} replays it). The partitions vary through random input and
 * frame bounds, the retention through random journal bounds.
 */
@Tag("unit")
class SourceModelProperties {
    private static final List<Namespace> NAMESPACES = List.of(Namespace.utf8("a"), Namespace.utf8("b"), Namespace.utf8("c"));

    /** One random mutation: put or delete of a small key space (so keys repeat and deletes hit). */
    record Op(boolean put, int ns, int key, Medium medium, long size) {}

    static List<Op> history(Gen g) {
        return g.uniformList(0, 60, x -> new Op(x.intIn(0, 9) < 6, x.intIn(0, 2), x.intIn(0, 5), x.oneOf(Medium.values()),
                x.longIn(0, 1000)));
    }

    static InventoryConfig config(Gen g) {
        return InventoryConfig.defaults().withInputRecordsMax(g.intIn(1, 8))
                .withInputBytesMax(g.longIn(InventoryConfig.JOURNAL_ENTRY_BYTES_MAX, 800))
                .withFrameEncodedBytesMax(g.intIn(InventoryConfig.FRAME_ENCODED_BYTES_MIN, 600))
                .withJournalRecordsMax(g.intIn(1, 70)).withJournalBytesMax(g.longIn(InventoryConfig.JOURNAL_ENTRY_BYTES_MAX, 5000))
                .withPageRecordsMax(g.intIn(1, 5));
    }

    static Scope scope(Gen g) {
        return switch (g.weighted(4, 1, 4)) {
            case 0 -> Scope.all();
            case 1 -> Scope.none();
            default -> {
                List<Namespace> subset = new ArrayList<>();
                while (subset.isEmpty()) {
                    for (Namespace n : NAMESPACES) {
                        if (g.bool()) {
                            subset.add(n);
                        }
                    }
                }
                yield Scope.of(subset);
            }
        };
    }

    /** Outcome counts of one property's tries, printed after the run (how often each path was taken). */
    static final class Outcomes {
        private final Map<String, Long> counts = new TreeMap<>();

        void collect(String outcome) {
            counts.merge(outcome, 1L, Long::sum);
        }

        void print(String property) {
            System.out.printf("%s outcomes: %s%n", property, counts);
        }
    }

    static StateKey key(Op op) {
        return new StateKey(NAMESPACES.get(op.ns()), new byte[] {(byte) op.key()});
    }

    /** Applies {@code op} to source and model; the source's result must be what the model predicts. */
    static void apply(InventorySource source, ResidenceModel model, Op op) {
        StateKey k = key(op);
        if (op.put()) {
            ResidenceRecord expected = model.put(k, op.medium(), op.size());
            assertThat(source.put(k, op.medium(), op.size())).isInstanceOfSatisfying(MutationResult.Recorded.class,
                    r -> assertThat(r.record()).isEqualTo(expected));
        } else {
            ResidenceRecord expected = model.delete(k, op.medium());
            MutationResult r = source.delete(k, op.medium());
            if (expected == null) {
                assertThat(r).isEqualTo(new MutationResult.NotResident(k, op.medium()));
            } else {
                assertThat(r).isInstanceOfSatisfying(MutationResult.Recorded.class, rec -> assertThat(rec.record()).isEqualTo(expected));
            }
        }
    }

    record ReadCase(List<Op> history, InventoryConfig config, Scope scope, int cursorPick, int intervalsMax) {}

    @Test
    @DisplayName("INV-4 DELTA-1 DELTA-3 PUB-1 PUB-6 PUB-7 PUB-8 BND-5 view(a) + intervals(a, b] == resident map at b, scoped (2,000 seeded tries)")
    void intervalsFromAnyRetainedCursorReachTheModel() {
        Outcomes outcomes = new Outcomes();
        SeededTries.run("intervalsFromAnyRetainedCursorReachTheModel", 2000, SeededTries.freshBaseSeed(),
                g -> new ReadCase(history(g), config(g), scope(g), g.intIn(0, 1000), g.intIn(1, 2)),
                c -> outcomes.collect(readToHead(c.history(), c.config(), c.scope(), c.cursorPick(), c.intervalsMax())));
        outcomes.print("intervalsFromAnyRetainedCursorReachTheModel");
    }

    private static String readToHead(List<Op> history, InventoryConfig config, Scope scope, int cursorPick, int intervalsMax) {
        InventorySource source = InventorySource.create(config);
        ResidenceModel model = new ResidenceModel();
        for (Op op : history) {
            apply(source, model, op);
        }
        long head = model.head();
        long oldest = model.oldestRetained(config.journalRecordsMax(), config.journalBytesMax());
        assertThat(source.status().oldestRetainedSequence()).as("retention by the documented formula").isEqualTo(oldest);
        // Mostly a retained cursor (the property's subject), sometimes any cursor (the trimmed boundary).
        long lowest = oldest - 1;
        long a = cursorPick < 800 ? lowest + cursorPick % (head - lowest + 1) : cursorPick % (head + 1);
        ReadOutcome first = source.read(a, scope, intervalsMax);
        if (a < oldest - 1) {
            assertThat(first).isEqualTo(new ReadOutcome.Trimmed(a, oldest));
            return "trimmed";
        }
        ResidenceModel.View view = new ResidenceModel.View(model.mapAt(a, scope));
        long cursor = a;
        ReadOutcome outcome = first;
        int reads = 0;
        while (true) {
            assertThat(outcome).isInstanceOf(ReadOutcome.Intervals.class);
            List<CoalescedInterval> intervals = ((ReadOutcome.Intervals) outcome).intervals();
            assertThat(intervals.size()).isBetween(cursor == head ? 0 : 1, intervalsMax);
            SourceIntervalTableTest.checkIntervals(config, model, cursor, scope, intervals);
            for (CoalescedInterval ci : intervals) {
                view.apply(ci);
            }
            cursor = ((ReadOutcome.Intervals) outcome).endCursor(cursor);
            if (cursor == head) {
                break;
            }
            assertThat(++reads).as("every read makes progress").isLessThanOrEqualTo(1000);
            outcome = source.read(cursor, scope, intervalsMax);
        }
        assertThat(view.rows).isEqualTo(model.mapAt(head, scope));
        return reads == 0 ? "one read" : "several reads";
    }

    record SnapshotCase(List<Op> setup, List<Op> during, InventoryConfig config, Scope scope, int mutationsPerStep,
            int replayIntervals) {}

    @Test
    @DisplayName("SNAP-1 SNAP-2 SNAP-3 SNAP-4 SNAP-9 pages + replay by version == resident map at S1, or aborted trimmed exactly when the model says so (2,000 seeded tries)")
    void snapshotWithInterleavedMutations() {
        Outcomes outcomes = new Outcomes();
        SeededTries.run("snapshotWithInterleavedMutations", 2000, SeededTries.freshBaseSeed(),
                g -> new SnapshotCase(history(g), history(g), config(g), scope(g), g.intIn(1, 3), g.intIn(1, 3)),
                c -> outcomes.collect(snapshot(c.setup(), c.during(), c.config(), c.scope(), c.mutationsPerStep(), c.replayIntervals())));
        outcomes.print("snapshotWithInterleavedMutations");
    }

    private static String snapshot(List<Op> setup, List<Op> during, InventoryConfig config, Scope scope, int mutationsPerStep,
            int replayIntervals) {
        InventorySource source = InventorySource.create(config);
        ResidenceModel model = new ResidenceModel();
        for (Op op : setup) {
            apply(source, model, op);
        }
        SnapshotScan scan = source.openSnapshot(scope);
        assertThat(scan.s0()).isEqualTo(model.head());
        ResidenceModel.View view = new ResidenceModel.View(Map.of());
        List<Op> pending = new ArrayList<>(during);
        ResidenceRecord last = null;
        long s1;
        while (true) {
            boolean trimmed = model.oldestRetained(config.journalRecordsMax(), config.journalBytesMax()) - 1 > scan.s0();
            ScanStep step = scan.nextPage();
            if (trimmed) {
                assertThat(step).isInstanceOfSatisfying(ScanStep.Aborted.class,
                        a -> assertThat(a.cause()).isEqualTo(SnapshotScan.SnapshotAbortCause.SNAPSHOT_ABORTED_TRIMMED));
                return "aborted during scan";
            }
            if (step instanceof ScanStep.ScanEnd end) {
                s1 = end.s1();
                assertThat(s1).isEqualTo(model.head());
                break;
            }
            ScanStep.Page page = (ScanStep.Page) step;
            assertThat(page.records()).isNotEmpty().hasSizeLessThanOrEqualTo(config.pageRecordsMax());
            for (ResidenceRecord r : page.records()) {
                assertThat(last == null || orbitkv.inventory.ResidenceOrder.compare(last, r) < 0).isTrue();
                assertThat(scope.contains(r.key().namespace())).isTrue();
                assertThat(r).isEqualTo(model.current(r.key(), r.medium()));
                view.rows.put(new ResidenceModel.Residence(r.key(), r.medium()), r);
                last = r;
            }
            for (int i = 0; i < mutationsPerStep && !pending.isEmpty(); i++) {
                apply(source, model, pending.removeFirst());
            }
        }
        long replayCursor = scan.s0();
        while (true) {
            for (int i = 0; i < mutationsPerStep && !pending.isEmpty(); i++) {
                apply(source, model, pending.removeFirst());
            }
            boolean trimmed = model.oldestRetained(config.journalRecordsMax(), config.journalBytesMax()) - 1 > replayCursor;
            ReplayStep step = scan.nextReplay(replayIntervals);
            if (trimmed && replayCursor < s1) {
                assertThat(step).isInstanceOfSatisfying(ReplayStep.Aborted.class,
                        a -> assertThat(a.cause()).isEqualTo(SnapshotScan.SnapshotAbortCause.SNAPSHOT_ABORTED_TRIMMED));
                return "aborted during replay";
            }
            ReplayStep.Replay replay = (ReplayStep.Replay) step;
            for (CoalescedInterval ci : replay.intervals()) {
                assertThat(ci.interval().from()).isEqualTo(replayCursor);
                assertThat(ci.interval().to()).isLessThanOrEqualTo(s1);
                view.applyByVersion(ci);
                replayCursor = ci.interval().to();
            }
            if (replay.complete()) {
                break;
            }
        }
        assertThat(replayCursor).isEqualTo(s1);
        assertThat(view.rows).isEqualTo(model.mapAt(s1, scope));
        return s1 > scan.s0() ? "committed with replay" : "committed without replay";
    }
}
