package orbitkv.conformance.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.Interval;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.Medium;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.Scope;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.SubscriptionStatus;
import orbitkv.inventory.ViewReceiver;
import orbitkv.membership.Incarnation;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Both ends of InventorySession v4 over real gRPC on loopback, applying into the real GlobalIndex. */
@Tag("gate")
class SessionEndToEndTest {
    private static final Duration BOUND = Duration.ofSeconds(20);

    static InventoryConfig smallPages() {
        return InventoryConfig.defaults().withPageRecordsMax(16);
    }

    @Test
    @DisplayName("SNAP-1 SNAP-2 SNAP-3 SNAP-5 SNAP-7 DELTA-1 SES-12: bootstrap then deltas converge to the source's resident map")
    void bootstrapThenDeltas() throws Exception {
        try (SessionWorld w = new SessionWorld(SessionWorld.fastConfig(), smallPages())) {
            SessionWorld.SourceNode s = w.addSource("src-1", 1);
            SplittableRandom rnd = new SplittableRandom(11);
            for (int i = 0; i < 400; i++) {
                s.put(SessionWorld.key(rnd.nextInt(3), rnd.nextInt(64)), rnd.nextBoolean() ? Medium.DRAM : Medium.SSD, 1 + i);
            }
            SessionWorld.RequesterNode r = w.addRequester("req-1",
                    Scope.of(List.of(SessionWorld.NAMESPACES.get(0), SessionWorld.NAMESPACES.get(2))));
            w.publishMembership();
            w.awaitConvergedAndCompare(BOUND, () -> "after bootstrap");
            for (int i = 0; i < 300; i++) {
                if (rnd.nextInt(3) == 0) {
                    s.delete(SessionWorld.key(rnd.nextInt(3), rnd.nextInt(64)), Medium.DRAM);
                } else {
                    s.put(SessionWorld.key(rnd.nextInt(3), rnd.nextInt(64)), Medium.SSD, 7);
                }
            }
            w.awaitConvergedAndCompare(BOUND, () -> "after deltas");
            SubscriptionStatus st = r.subscriber.status();
            assertThat(st.sessions()).singleElement().satisfies(p -> {
                assertThat(p.installs()).isEqualTo(1);
                assertThat(p.state()).isEqualTo(SubscriptionStatus.State.STREAMING);
            });
            assertThat(st.capacityIncomplete()).isFalse();
            assertThat(s.server.metrics().originalMutations())
                    .isGreaterThanOrEqualTo(s.server.metrics().coalescedRecords()).isPositive();
            // Convergence is observed at the requester; the ACK that returns credit follows within ackIntervalMs
            // (DELTA-12), so the source's ledger is awaited, not sampled at once.
            SessionWorld.await("credit returned to the source", BOUND,
                    () -> s.server.status().getFirst().creditReturnedBytes() > 0);
            assertThat(s.server.status()).singleElement().satisfies(ss -> {
                assertThat(ss.outstandingBytes()).isLessThanOrEqualTo(w.sessionConfig.receiveWindowBytes());
                assertThat(ss.creditReturnedBytes()).isPositive();
            });
        }
    }

    /**
     * Issue 25: the source counted a delta's mutations after emitting its frame, so the requester could apply the
     * delta (and a test could observe convergence) while {@code originalMutations} did not yet include it. At every
     * delta the requester applies, the source's counter must already cover every mutation applied so far. Each
     * delta frame is one chance for the old order to show; this run applies hundreds.
     */
    @Test
    @DisplayName("PUB-1 the source counts a delta's mutations before the requester can apply the delta")
    void deltaCountedBeforeApplied() throws Exception {
        try (SessionWorld w = new SessionWorld(SessionWorld.fastConfig(), smallPages())) {
            SessionWorld.SourceNode s = w.addSource("src-1", 1);
            AtomicLong applied = new AtomicLong();
            AtomicLong deltas = new AtomicLong();
            AtomicReference<String> behind = new AtomicReference<>();
            w.receiverWrapper = inner -> new DeltaWitness(inner, interval -> {
                long covered = applied.addAndGet(interval.length());
                long counted = s.server.metrics().originalMutations();
                deltas.incrementAndGet();
                if (counted < covered) {
                    behind.compareAndSet(null, "delta " + interval + " applied with " + covered
                            + " mutations applied in all, but the source had counted " + counted);
                }
            });
            SplittableRandom rnd = new SplittableRandom(25);
            for (int i = 0; i < 50; i++) {
                s.put(SessionWorld.key(0, rnd.nextInt(64)), Medium.DRAM, 1 + i);
            }
            w.addRequester("req-1", Scope.all());
            w.publishMembership();
            w.awaitConvergedAndCompare(BOUND, () -> "after bootstrap");
            for (int round = 0; round < 100; round++) {
                for (int i = 0; i < 3; i++) {
                    s.put(SessionWorld.key(rnd.nextInt(3), rnd.nextInt(64)), Medium.SSD, 2 + round);
                }
                w.awaitConvergedAndCompare(BOUND, () -> "after a burst of three puts");
            }
            System.out.println("deltaCountedBeforeApplied: " + deltas.get() + " deltas applied covering " + applied.get()
                    + " mutations; source counted " + s.server.metrics().originalMutations());
            assertThat(deltas.get()).as("deltas applied (one per burst at least)").isGreaterThanOrEqualTo(100);
            assertThat(behind.get()).as("the source's originalMutations lagged an applied delta").isNull();
        }
    }

    /** A receiver that reports each delta to {@code onDelta} before passing everything through unchanged. */
    private record DeltaWitness(ViewReceiver inner, java.util.function.Consumer<Interval> onDelta) implements ViewReceiver {
        @Override
        public StageOutcome beginStaging(Incarnation source, UUID viewId, ScopeDigest scopeDigest, long s0, long frameNumber) {
            return inner.beginStaging(source, viewId, scopeDigest, s0, frameNumber);
        }

        @Override
        public StageOutcome stagePage(Incarnation source, UUID viewId, long pageOrdinal, long frameNumber, RecordBatch records) {
            return inner.stagePage(source, viewId, pageOrdinal, frameNumber, records);
        }

        @Override
        public DeltaOutcome applyDelta(Incarnation source, UUID viewId, long frameNumber, Interval interval, RecordBatch records) {
            onDelta.accept(interval);
            return inner.applyDelta(source, viewId, frameNumber, interval, records);
        }

        @Override
        public CommitOutcome commit(Incarnation source, UUID viewId, CommitMarker marker) {
            return inner.commit(source, viewId, marker);
        }

        @Override
        public void discardStaging(Incarnation source, ResetCause cause) {
            inner.discardStaging(source, cause);
        }

        @Override
        public Optional<InstalledCursor> installedCursor(Incarnation source) {
            return inner.installedCursor(source);
        }

        @Override
        public void observeLiveness(Incarnation source, long sourceHead) {
            inner.observeLiveness(source, sourceHead);
        }
    }

    /**
     * Every other test stages tables far below the partition threshold; this one stages 240,000 rows, a table of
     * 2^19 slots, so the commit (or the first replay frame) builds it partitioned with each pass split between the
     * caller and the common pool, the path every large bootstrap of a Manager takes. Mutations race the bootstrap,
     * so the build may happen at replay or at commit; either way the view must equal the oracle.
     */
    @Test
    @DisplayName("SNAP-2 SNAP-7 SNAP-9: a bootstrap of 240,000 residences (partitioned, split staging build) equals the source")
    void largeBootstrapEqualsSource() throws Exception {
        int saved = SessionWorld.keysPerNamespace;
        SessionWorld.keysPerNamespace = 40_000;
        try (SessionWorld w = new SessionWorld(SessionWorld.fastConfig(), InventoryConfig.defaults())) {
            SessionWorld.SourceNode s = w.addSource("src-1", 1);
            for (int ns = 0; ns < 3; ns++) {
                for (int k = 0; k < SessionWorld.keysPerNamespace; k++) {
                    s.put(SessionWorld.key(ns, k), Medium.DRAM, 1 + k);
                    s.put(SessionWorld.key(ns, k), Medium.SSD, 2 + k);
                }
            }
            w.addRequester("req-1", Scope.all(), false);
            w.publishMembership();
            SplittableRandom rnd = new SplittableRandom(23);
            for (int i = 0; i < 2_000; i++) {
                int ns = rnd.nextInt(3);
                int k = rnd.nextInt(SessionWorld.keysPerNamespace);
                if (rnd.nextInt(3) == 0) {
                    s.delete(SessionWorld.key(ns, k), Medium.SSD);
                } else {
                    s.put(SessionWorld.key(ns, k), Medium.DRAM, 7);
                }
            }
            w.awaitConvergedAndCompare(Duration.ofSeconds(60), () -> "240,000-residence bootstrap with racing mutations");
        } finally {
            SessionWorld.keysPerNamespace = saved;
        }
    }

    @Test
    @DisplayName("SNAP-8 DELTA-10 SES-6: a cut connection reconnects with a new session id and resumes the installed view")
    void disconnectResumes() throws Exception {
        try (SessionWorld w = new SessionWorld(SessionWorld.fastConfig(), smallPages())) {
            SessionWorld.SourceNode s = w.addSource("src-1", 1);
            for (int i = 0; i < 100; i++) {
                s.put(SessionWorld.key(i % 3, i % 64), Medium.DRAM, i + 1);
            }
            SessionWorld.RequesterNode r = w.addRequester("req-1", Scope.all());
            w.publishMembership();
            w.awaitConvergedAndCompare(BOUND, () -> "bootstrap");
            s.proxy.cutAll();
            for (int i = 0; i < 50; i++) {
                s.put(SessionWorld.key(i % 3, (i * 7) % 64), Medium.SSD, 3);
            }
            SessionWorld.await("reconnected", BOUND, () -> r.subscriber.status().sessions().getFirst().connects() >= 2);
            w.awaitConvergedAndCompare(BOUND, () -> "after resume");
            assertThat(r.subscriber.status().sessions().getFirst().installs()).as("resumed, not re-bootstrapped").isEqualTo(1);
        }
    }

    @Test
    @DisplayName("BND-3: sources beyond sessionsPerRequesterMax are reported as incomplete capacity")
    void sessionLimitReported() throws Exception {
        try (SessionWorld w = new SessionWorld(SessionWorld.fastConfig().withSessionLimits(1, 16), smallPages())) {
            SessionWorld.SourceNode a = w.addSource("src-a", 1);
            SessionWorld.SourceNode b = w.addSource("src-b", 1);
            SessionWorld.RequesterNode r = w.addRequester("req-1", Scope.all());
            w.publishMembership();
            SubscriptionStatus st = r.subscriber.status();
            assertThat(st.admittedSources()).isEqualTo(2);
            assertThat(st.sessions()).extracting(SubscriptionStatus.PeerSession::source).containsExactly(a.incarnation);
            assertThat(st.beyondLimit()).containsExactly(b.incarnation);
            assertThat(st.capacityIncomplete()).isTrue();
        }
    }

    @Test
    @DisplayName("API-5 PUB-4: FlushThrough reaches the open session")
    void flushThrough() throws Exception {
        try (SessionWorld w = new SessionWorld(SessionWorld.fastConfig(), smallPages())) {
            SessionWorld.SourceNode s = w.addSource("src-1", 1);
            SessionWorld.RequesterNode r = w.addRequester("req-1", Scope.all());
            w.publishMembership();
            w.awaitConvergedAndCompare(BOUND, () -> "empty bootstrap");
            long seq = s.put(SessionWorld.key(0, 1), Medium.DRAM, 9);
            assertThat(r.subscriber.flushThrough(s.incarnation, seq)).isTrue();
            w.awaitConvergedAndCompare(BOUND, () -> "after flush");
        }
    }
}
