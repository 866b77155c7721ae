package orbitkv.conformance.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.index.KeyCandidates;
import orbitkv.index.LockHoldSnapshot;
import orbitkv.index.LookupOutcome;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.membership.Incarnation;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lookups running during applies observe each frame entirely or not at all (DELTA-2, DELTA-4): frame
 * {@code i} rewrites all 32 keys with sequences in {@code (32(i-1), 32i]}, so every lookup must see all
 * 32 sequences from one frame.
 */
@Tag("unit")
class FrameAtomicityTest {
    static final int KEYS = 32;
    static final int FRAMES = 3_000;

    @Test
    @DisplayName("DELTA-2 DELTA-4 IDX-1 concurrent lookups see each frame entirely or not at all")
    void lookupsNeverSeePartialFrames() throws Exception {
        Incarnation self = TestMembership.incarnation("self", 1, 1);
        Incarnation src = TestMembership.incarnation("src", 1, 2);
        GlobalIndex index = GlobalIndex.create(self, ReceiverScript.SCOPE, IndexConfig.defaults(), System::nanoTime,
                Runnable::run);
        index.onMembership(TestMembership.of(1, true, List.of(self, src)));
        UUID view = new UUID(1, 1);
        TranscriptDigest digest = TranscriptDigest.builder().begin(1, view, ReceiverScript.SCOPE.digest(), 0).finish();
        index.beginStaging(src, view, ReceiverScript.SCOPE.digest(), 0, 1);
        assertThat(index.commit(src, view, new CommitMarker(0, 0, 1, 1, 0, digest)))
                .isInstanceOf(CommitOutcome.Installed.class);

        List<StateKey> keys = new ArrayList<>();
        for (int k = 0; k < KEYS; k++) {
            keys.add(new StateKey(ReceiverScript.NS_A, ("block-" + k).getBytes(StandardCharsets.UTF_8)));
        }
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong observedFrames = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<Set<Long>>> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                readers.add(pool.submit(() -> {
                    Set<Long> seen = new HashSet<>();
                    while (!done.get()) {
                        LookupOutcome.Candidates c = (LookupOutcome.Candidates) index.lookup(keys);
                        long frame = -1;
                        for (KeyCandidates kc : c.keys()) {
                            long f = kc.replicas().isEmpty() ? 0 : (kc.replicas().getFirst().sequence() - 1) / KEYS + 1;
                            if (frame == -1) {
                                frame = f;
                            }
                            if (f != frame) {
                                StringBuilder b = new StringBuilder();
                                for (KeyCandidates x : c.keys()) {
                                    b.append(x.key().keyHex()).append('=').append(x.replicas()).append('\n');
                                }
                                throw new AssertionError("mixed frames in one lookup: " + b);
                            }
                        }
                        seen.add(frame);
                    }
                    return seen;
                }));
            }
            Future<?> writer = pool.submit(() -> {
                for (int i = 1; i <= FRAMES; i++) {
                    long from = (long) (i - 1) * KEYS;
                    List<ResidenceRecord> recs = new ArrayList<>(KEYS);
                    for (int k = 0; k < KEYS; k++) {
                        recs.add(ResidenceRecord.put(keys.get(k), Medium.DRAM, from + k + 1, i));
                    }
                    DeltaOutcome out = index.applyDelta(src, view, i + 1, Interval.of(from, from + KEYS), recs);
                    assertThat(out).isEqualTo(new DeltaOutcome.Applied(from + KEYS));
                }
                done.set(true);
                return null;
            });
            writer.get(60, TimeUnit.SECONDS);
            for (Future<Set<Long>> r : readers) {
                observedFrames.addAndGet(r.get(60, TimeUnit.SECONDS).size());
            }
        } finally {
            done.set(true);
            pool.shutdownNow();
        }
        assertThat(observedFrames.get()).as("readers observed several distinct frames").isGreaterThan(2);
        LockHoldSnapshot apply = index.applyLockHold();
        LockHoldSnapshot lookup = index.lookupLockHold();
        assertThat(apply.total()).as("apply lock holds recorded").isGreaterThanOrEqualTo(FRAMES);
        assertThat(lookup.total()).as("lookup lock holds recorded").isPositive();
    }
}
