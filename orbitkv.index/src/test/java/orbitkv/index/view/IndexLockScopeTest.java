package orbitkv.index.view;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.index.IndexConfig;
import orbitkv.index.LookupOutcome;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Incarnation;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * DELTA-4: the write lock that lookups wait on never covers frame preparation. {@link IndexLockScope} records
 * every preparation that runs under an owner view's write lock; over a workload of bootstraps, deltas and
 * re-bootstraps against two owners with a concurrent lookup thread, that count must not move, while the
 * write lock was held many times (the check is not vacuous) and a preparation under it is counted (the
 * instrument works).
 */
@Tag("unit")
class IndexLockScopeTest {
    @Test
    @DisplayName("DELTA-4 frames are prepared (validated, hashed, interned) before any owner view's write lock, never under it")
    void preparationNeverUnderTheWriteLock() throws Exception {
        Fixture f = new Fixture(IndexConfig.defaults());
        Incarnation a = Fixture.inc("a", 1);
        Incarnation b = Fixture.inc("b", 2);
        f.admit(a, b);
        long before = IndexLockScope.preparedUnderLock();
        long holdsBefore = f.index.applyLockHold().total();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong lookups = new AtomicLong();
        List<StateKey> keys = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            keys.add(Fixture.key(String.format("k%06d", i)));
        }
        Thread reader = Thread.ofPlatform().name("lookups").start(() -> {
            while (!stop.get()) {
                assertThat(f.index.lookup(keys)).isInstanceOf(LookupOutcome.Candidates.class);
                lookups.incrementAndGet();
            }
        });
        try {
            for (Incarnation owner : List.of(a, b)) {
                for (int round = 0; round < 3; round++) {
                    UUID view = UUID.randomUUID();
                    long s1 = 100L * (round + 1);
                    assertThat(f.install(owner, view, s1, Fixture.puts(64, 10 + round))).isInstanceOf(CommitOutcome.Installed.class);
                    long w = s1;
                    for (int d = 0; d < 20; d++) {
                        List<ResidenceRecord> records = List.of(
                                ResidenceRecord.put(keys.get(d), Medium.SSD, w + 1, d),
                                ResidenceRecord.delete(keys.get(d + 20), Medium.DRAM, w + 2));
                        DeltaOutcome o = f.index.applyDelta(owner, view, 1000 + d, new Interval(w, w + 2), RecordBatch.of(records));
                        assertThat(o).isInstanceOf(DeltaOutcome.Applied.class);
                        w += 2;
                    }
                }
            }
        } finally {
            stop.set(true);
            reader.join(10_000);
        }
        assertThat(lookups.get()).as("lookups ran concurrently").isPositive();
        assertThat(f.index.applyLockHold().total() - holdsBefore).as("write-lock holds during the workload").isGreaterThan(100);
        assertThat(IndexLockScope.preparedUnderLock() - before).as("frames prepared under an owner view's write lock").isZero();

        // The instrument itself: a preparation while the write lock is held is counted.
        IndexLockScope.entered();
        try {
            PreparedFrame.page(RecordBatch.of(Fixture.puts(2, 1)), Fixture.SCOPE, new NamespaceTable());
        } finally {
            IndexLockScope.left();
        }
        assertThat(IndexLockScope.preparedUnderLock() - before).isEqualTo(1);
        assertThat(IndexLockScope.heldByCurrentThread()).isFalse();
    }
}
