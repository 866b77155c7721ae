package orbitkv.conformance.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.statistics.Statistics;
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
import net.jqwik.api.Label;

/**
 * Random mutation histories against the independent {@link ResidenceModel} (jqwik prints the seed of a
 * failing run; rerun with {@code @Property(seed = ...)}). The partitions vary through random input and
 * frame bounds, the retention through random journal bounds.
 */
class SourceModelProperties {
    private static final List<Namespace> NAMESPACES = List.of(Namespace.utf8("a"), Namespace.utf8("b"), Namespace.utf8("c"));

    /** One random mutation: put or delete of a small key space (so keys repeat and deletes hit). */
    record Op(boolean put, int ns, int key, Medium medium, long size) {}

    @Provide
    Arbitrary<List<Op>> histories() {
        Arbitrary<Op> op = Combinators.combine(
                Arbitraries.integers().between(0, 9).map(i -> i < 6),
                Arbitraries.integers().between(0, 2),
                Arbitraries.integers().between(0, 5),
                Arbitraries.of(Medium.class),
                Arbitraries.longs().between(0, 1000)).as(Op::new);
        return op.list().ofMinSize(0).ofMaxSize(60).withSizeDistribution(RandomDistribution.uniform());
    }

    @Provide
    Arbitrary<InventoryConfig> configs() {
        return Combinators.combine(
                Arbitraries.integers().between(1, 8),
                Arbitraries.longs().between(InventoryConfig.JOURNAL_ENTRY_BYTES_MAX, 800),
                Arbitraries.integers().between(InventoryConfig.FRAME_ENCODED_BYTES_MIN, 600),
                Arbitraries.integers().between(1, 70),
                Arbitraries.longs().between(InventoryConfig.JOURNAL_ENTRY_BYTES_MAX, 5000),
                Arbitraries.integers().between(1, 5)).as((inRec, inBytes, frame, jRec, jBytes, page) ->
                InventoryConfig.defaults().withInputRecordsMax(inRec).withInputBytesMax(inBytes).withFrameEncodedBytesMax(frame)
                        .withJournalRecordsMax(jRec).withJournalBytesMax(jBytes).withPageRecordsMax(page));
    }

    @Provide
    Arbitrary<Scope> scopes() {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(4, Arbitraries.just(Scope.all())),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(Scope.none())),
                net.jqwik.api.Tuple.of(4, Arbitraries.subsetOf(NAMESPACES).ofMinSize(1).map(Scope::of)));
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

    @Property(tries = 2000)
    @Label("INV-4 DELTA-1 DELTA-3 PUB-1 PUB-6 PUB-7 PUB-8 BND-5 view(a) + intervals(a, b] == resident map at b, scoped")
    void intervalsFromAnyRetainedCursorReachTheModel(@ForAll("histories") List<Op> history, @ForAll("configs") InventoryConfig config,
            @ForAll("scopes") Scope scope, @ForAll @IntRange(min = 0, max = 1000) int cursorPick,
            @ForAll @IntRange(min = 1, max = 2) int intervalsMax) {
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
            Statistics.label("read").collect("trimmed");
            return;
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
        Statistics.label("read").collect(reads == 0 ? "one read" : "several reads");
    }

    @Property(tries = 2000)
    @Label("SNAP-1 SNAP-2 SNAP-3 SNAP-4 SNAP-9 pages + replay by version == resident map at S1, or aborted trimmed exactly when the model says so")
    void snapshotWithInterleavedMutations(@ForAll("histories") List<Op> setup, @ForAll("histories") List<Op> during,
            @ForAll("configs") InventoryConfig config, @ForAll("scopes") Scope scope,
            @ForAll @IntRange(min = 1, max = 3) int mutationsPerStep, @ForAll @IntRange(min = 1, max = 3) int replayIntervals) {
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
                Statistics.label("snapshot").collect("aborted during scan");
                return;
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
                Statistics.label("snapshot").collect("aborted during replay");
                return;
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
        Statistics.label("snapshot").collect(s1 > scan.s0() ? "committed with replay" : "committed without replay");
    }
}
