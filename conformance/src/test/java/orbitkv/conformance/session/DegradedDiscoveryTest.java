package orbitkv.conformance.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;
import orbitkv.index.Coverage;
import orbitkv.index.KeyCandidates;
import orbitkv.index.LookupOutcome;
import orbitkv.index.OwnerState;
import orbitkv.index.OwnerViewStatus;
import orbitkv.index.Replica;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.SourceSessionStatus;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.SubscriptionStatus;
import orbitkv.membership.Incarnation;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * SNAP-13 (with SNAP-4) over real gRPC on loopback, exported API only: a source whose journal is far shorter
 * than a snapshot lasts, under steady churn, aborts every snapshot attempt as trimmed. While that storm lasts
 * the requester's discovery of the source is observably degraded (never installed, owner not INSTALLED,
 * coverage not complete, resets and rejections counted), the retries are bounded by the configured
 * snapshot retry backoff, and local storage is never blocked (every put on the source and on the
 * requester's own inventory returns within a stated bound). Once the churn stops the requester installs
 * the source's view through its head and it equals the journal oracle.
 *
 * <p>The churn writers park between puts to hold a steady rate: that is load generation. Every wait for a
 * condition is bounded ({@link SessionWorld#await}); the storm sampler records timestamped counters.
 */
@Tag("gate")
class DegradedDiscoveryTest {
    /** SNAP-4 backoff of this test: 20 ms doubling to 200 ms (the sleep is backoff/2 + random(backoff/2)). */
    static final long BACKOFF_MIN_MS = 20;
    static final long BACKOFF_MAX_MS = 200;
    /** A journal of 64 records: at the churn rate it holds ~32 ms of history. */
    static final int JOURNAL_RECORDS_MAX = 64;
    /** 3 × 4,000 resident keys: a clean snapshot in 8-record pages through a 2 KiB window takes ~10× longer (measured ~300 ms). */
    static final int KEYS_PER_NAMESPACE = 4000;
    static final int PAGE_RECORDS_MAX = 8;
    static final long WINDOW_BYTES = 2 << 10;
    /** The churn on the source: one put every 0.5 ms (2,000 puts/s). */
    static final long CHURN_PERIOD_NANOS = 500_000;
    /** The requester's own local inventory: one put every 1 ms. */
    static final long LOCAL_PERIOD_NANOS = 1_000_000;
    static final Duration STORM = Duration.ofSeconds(3);
    /**
     * SNAP-13 "never blocked local storage", the typical put: 99 % of puts return within this (quiet machine: max
     * 0.6-5.8 ms). A put that waited on the session would wait on every snapshot attempt, not on 1 % of puts.
     */
    static final long PUT_LATENCY_BOUND_MS = 50;
    /**
     * SNAP-13, the slowest put: a wall-clock maximum includes the writer thread's preemption, which on a loaded
     * machine exceeded 50 ms once (issue 25), so the maximum is bounded generously. A put blocked behind a
     * snapshot (~300 ms each, retried for the whole 3 s storm) or a backoff still exceeds it.
     */
    static final long PUT_LATENCY_MAX_BOUND_MS = 1_000;
    /** Recovery: the last aborted attempt's backoff (≤ 200 ms) plus one clean snapshot (~300 ms); generous for load. */
    static final Duration RECOVERY = Duration.ofSeconds(30);
    static final Duration OPEN = Duration.ofSeconds(30);

    static SessionConfig sessionConfig() {
        return SessionConfig.defaults().withBackoffMs(2, 50, BACKOFF_MIN_MS, BACKOFF_MAX_MS)
                .withFrameBytesMax(1 << 10, 4 << 10).withReceiveWindowBytes(WINDOW_BYTES);
    }

    static InventoryConfig inventoryConfig() {
        return InventoryConfig.defaults().withFrameEncodedBytesMax(1 << 10).withFrameDecodedBytesMax(4 << 10)
                .withPageRecordsMax(PAGE_RECORDS_MAX).withJournalRecordsMax(JOURNAL_RECORDS_MAX);
    }

    static StateKey residentKey(int i) {
        return SessionWorld.key(i % 3, (i / 3) % KEYS_PER_NAMESPACE);
    }

    static int residentKeys() {
        return 3 * KEYS_PER_NAMESPACE;
    }

    @Test
    @DisplayName("SNAP-13 SNAP-4: a trimmed-snapshot storm is observable degraded discovery with bounded retries; puts never block")
    void trimmedSnapshotStorm() throws Exception {
        SessionConfig config = sessionConfig();
        try (SessionWorld w = new SessionWorld(config, inventoryConfig())) {
            SessionWorld.SourceNode s = w.addSource("src-storm", 1);
            for (int i = 0; i < residentKeys(); i++) {
                s.put(residentKey(i), Medium.DRAM, 1 + i);
            }
            SessionWorld.RequesterNode r = w.addRequester("req", Scope.all(), false);
            InventorySource requesterLocal = InventorySource.create(InventoryConfig.defaults());

            PacedWriter churn = new PacedWriter("churn-source", CHURN_PERIOD_NANOS,
                    i -> s.put(residentKey((int) (i % residentKeys())), Medium.DRAM, 10_000 + i));
            PacedWriter local = new PacedWriter("churn-requester-local", LOCAL_PERIOD_NANOS, i -> {
                MutationResult m = requesterLocal.put(new StateKey(Namespace.utf8("local"), new byte[] {(byte) (i >>> 8), (byte) i}),
                        Medium.SSD, 1 + i);
                if (!(m instanceof MutationResult.Recorded)) {
                    throw new AssertionError("local put not recorded: " + m);
                }
            });
            churn.start();
            local.start();
            StormRecord storm;
            try {
                long publishNanos = System.nanoTime();
                w.publishMembership();
                SessionWorld.await("the source sends its first SnapshotBegin", OPEN, () -> snapshotBegins(s) >= 1);
                storm = sampleStorm(r, s, publishNanos, config);
            } finally {
                churn.stop();
                local.stop();
            }
            churn.rethrow();
            local.rethrow();
            long stopped = System.nanoTime();

            // 3. Local storage never blocked (SNAP-13).
            long churnExpected = STORM.toNanos() / CHURN_PERIOD_NANOS;
            assertThat(churn.quantileNanos(0.99)).as("SNAP-13: p99 source put latency %.2f ms over %d puts must stay below %d ms",
                    churn.quantileNanos(0.99) / 1e6, churn.count(), PUT_LATENCY_BOUND_MS)
                    .isLessThan(TimeUnit.MILLISECONDS.toNanos(PUT_LATENCY_BOUND_MS));
            assertThat(churn.maxNanos()).as("SNAP-13: max source put latency %.2f ms over %d puts must stay below the load-tolerant bound %d ms",
                    churn.maxNanos() / 1e6, churn.count(), PUT_LATENCY_MAX_BOUND_MS)
                    .isLessThan(TimeUnit.MILLISECONDS.toNanos(PUT_LATENCY_MAX_BOUND_MS));
            assertThat(churn.count()).as("SNAP-13: source puts completed during a %s storm at one per %d µs (expected ~%d)",
                    STORM, CHURN_PERIOD_NANOS / 1000, churnExpected).isGreaterThanOrEqualTo(churnExpected / 2);
            long localExpected = STORM.toNanos() / LOCAL_PERIOD_NANOS;
            assertThat(local.quantileNanos(0.99)).as("SNAP-13: p99 requester-local put latency %.2f ms must stay below %d ms",
                    local.quantileNanos(0.99) / 1e6, PUT_LATENCY_BOUND_MS).isLessThan(TimeUnit.MILLISECONDS.toNanos(PUT_LATENCY_BOUND_MS));
            assertThat(local.maxNanos()).as("SNAP-13: max requester-local put latency %.2f ms must stay below the load-tolerant bound %d ms",
                    local.maxNanos() / 1e6, PUT_LATENCY_MAX_BOUND_MS).isLessThan(TimeUnit.MILLISECONDS.toNanos(PUT_LATENCY_MAX_BOUND_MS));
            assertThat(local.count()).as("SNAP-13: requester-local puts completed (expected ~%d)", localExpected)
                    .isGreaterThanOrEqualTo(localExpected / 2);

            // 4. Recovery: once the churn stops the next clean snapshot installs the source's view at its head.
            long head = s.source.headSequence();
            SessionWorld.await("requester installs the source through its head " + head + " after the storm", RECOVERY,
                    () -> SessionWorld.cursor(r, s).map(c -> c.watermark() == head).orElse(false));
            long recoveredNanos = System.nanoTime() - stopped;
            assertRecoveredView(r, s, head);

            System.out.printf("SNAP-13 storm %.0f ms: %d snapshot attempts (bound %d), %.0f trimmed aborts, min capped gap <= %.1f ms "
                    + "(bound at cap %d ms), source puts %d max %.2f ms p99 %.2f ms, local puts %d max %.2f ms, "
                    + "recovery %.0f ms, head %d, attempts after storm %d%n",
                    storm.windowNanos / 1e6, storm.attempts, storm.attemptBound, storm.trimmedAborts, storm.minCappedGapMs,
                    BACKOFF_MAX_MS / 2, churn.count(), churn.maxNanos() / 1e6, churn.quantileNanos(0.99) / 1e6, local.count(),
                    local.maxNanos() / 1e6, recoveredNanos / 1e6, head, snapshotBegins(s) - storm.attempts);
        }
    }

    /** Figures of one storm, for the report line. */
    record StormRecord(long windowNanos, long attempts, long attemptBound, double trimmedAborts, double minCappedGapMs) {}

    /** One timestamped observation of the storm. */
    record Sample(long nanos, long begins) {}

    /**
     * Samples the storm for {@link #STORM} after the first SnapshotBegin, asserting at every sample that the
     * degradation is observable and that the source never installed, then checks the retry bounds.
     */
    private StormRecord sampleStorm(SessionWorld.RequesterNode r, SessionWorld.SourceNode s, long publishNanos,
            SessionConfig config) {
        List<Sample> samples = new ArrayList<>();
        samples.add(new Sample(System.nanoTime(), snapshotBegins(s)));
        long start = samples.getFirst().nanos();
        List<StateKey> probe = List.of(residentKey(0), residentKey(1), residentKey(2), residentKey(residentKeys() - 1));
        while (System.nanoTime() - start < STORM.toNanos()) {
            LockSupport.parkNanos(1_000_000); // sampling cadence (measurement), not synchronization
            long t = System.nanoTime();
            long begins = snapshotBegins(s);
            samples.add(new Sample(t, begins));
            assertDegraded(r, s, probe, begins);
        }
        Sample last = samples.getLast();
        long window = last.nanos() - start;

        // 1. Degradation is observable in counters and diagnostics at the end of the storm.
        long trimmed = s.server.metrics().rejected(orbitkv.inventory.wire.ErrorCause.SNAPSHOT_ABORTED_TRIMMED);
        long resets = r.subscriber.metrics().reset(orbitkv.inventory.ResetCause.SNAPSHOT_ABORTED);
        assertThat(last.begins()).as("SNAP-4: the source keeps retrying from a new S0 during the storm").isGreaterThanOrEqualTo(3);
        assertThat(trimmed).as("SNAP-13: the source counts every trimmed abort (%d SnapshotBegins sent)", last.begins())
                .isGreaterThanOrEqualTo(last.begins() - 1);
        assertThat(resets).as("SNAP-13: the requester counts a SNAPSHOT_ABORTED reset for every replaced attempt")
                .isGreaterThanOrEqualTo(last.begins() - 2);
        OwnerViewStatus owner = owner(r, s.incarnation);
        assertThat(owner.lastResetCause()).as("SNAP-13: owner status names the last reset: " + owner)
                .contains(ResetCause.SNAPSHOT_ABORTED);
        assertThat(r.index.status().ownersNotInstalled()).as("index status counts the degraded owner").isEqualTo(1);
        SubscriptionStatus.PeerSession peer = r.subscriber.status().sessions().stream()
                .filter(p -> p.source().equals(s.incarnation)).findFirst().orElseThrow();
        assertThat(peer.installs()).as("requester session installs during the storm: " + peer).isZero();
        assertThat(peer.connects()).as("one session retries snapshots (the backoff is never reset by a reconnect): " + peer)
                .isEqualTo(1);
        List<SourceSessionStatus> sessions = s.server.status();
        assertThat(sessions).as("source session status during the storm").hasSize(1);
        assertThat(sessions.getFirst().phase()).as("source session phase during the storm").isEqualTo(SourceSessionStatus.Phase.BOOTSTRAPPING);
        SourceSessionStatus served = sessions.getFirst();
        assertThat(served.snapshotAttempts()).as("DIAG-1 SNAP-13: the source session counts its snapshot attempts: " + served)
                .isGreaterThanOrEqualTo(last.begins());
        assertThat(served.snapshotAborts()).as("DIAG-1 SNAP-4: every attempt but the one in progress was aborted as trimmed: " + served)
                .isBetween(served.snapshotAttempts() - 1, served.snapshotAttempts());

        // 2. Bounded retries: the count admitted by the backoff schedule, and the spacing of each retry. The first
        // begin happened after publishNanos, so last.nanos() - publishNanos bounds the time the retries had.
        long bound = 1 + retriesAdmitted(last.nanos() - publishNanos, config) + 1;
        assertThat(last.begins()).as("SNAP-13: snapshot attempts in %.0f ms must be <= 1 + retries admitted by the backoff "
                + "(min %d ms doubling to max %d ms, each sleep >= backoff/2) + 1 slack = %d", (last.nanos() - publishNanos) / 1e6,
                BACKOFF_MIN_MS, BACKOFF_MAX_MS, bound).isLessThanOrEqualTo(bound);
        double minCappedGap = assertRetrySpacing(samples, publishNanos, config);
        return new StormRecord(window, last.begins(), bound, trimmed, minCappedGap);
    }

    /**
     * Retry k (the (k+1)-th SnapshotBegin) follows a sleep of at least b_{k-1}/2, with b_i = min(max, min·2^i):
     * every observed gap between consecutive begins, measured as an upper bound from the samples that bracket
     * them, must be at least that. Returns the smallest such gap once the backoff reached its cap.
     */
    private static double assertRetrySpacing(List<Sample> samples, long publishNanos, SessionConfig config) {
        long firstBegins = samples.getFirst().begins();
        double minCapped = Double.MAX_VALUE;
        long backoff = config.snapshotRetryBackoffMinMs();
        for (int k = 1; k < firstBegins; k++) {
            backoff = Math.min(config.snapshotRetryBackoffMaxMs(), backoff * 2);
        }
        for (long n = firstBegins + 1; n <= samples.getLast().begins(); n++) {
            int seen = firstIndexWithBegins(samples, n);
            int before = firstIndexWithBegins(samples, n - 1);
            // begin n-1 happened after sample (before - 1) (or before the first sample), begin n at or before sample seen.
            long gapUpperNanos = samples.get(seen).nanos() - (before == 0 ? publishNanos : samples.get(before - 1).nanos());
            long sleepMinMs = backoff / 2;
            assertThat(gapUpperNanos).as("SNAP-13 SNAP-4: SnapshotBegin %d follows begin %d by <= %.1f ms, but the backoff "
                    + "(%d ms, jitter backoff/2 + random(backoff/2)) sleeps >= %d ms", n, n - 1, gapUpperNanos / 1e6, backoff, sleepMinMs)
                    .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(sleepMinMs));
            if (backoff == config.snapshotRetryBackoffMaxMs() && before > 0) {
                minCapped = Math.min(minCapped, gapUpperNanos / 1e6);
            }
            backoff = Math.min(config.snapshotRetryBackoffMaxMs(), backoff * 2);
        }
        assertThat(minCapped).as("the storm lasted long enough for the backoff to reach its cap").isLessThan(Double.MAX_VALUE);
        return minCapped;
    }

    private static int firstIndexWithBegins(List<Sample> samples, long n) {
        for (int i = 0; i < samples.size(); i++) {
            if (samples.get(i).begins() >= n) {
                return i;
            }
        }
        throw new AssertionError("no sample with " + n + " begins");
    }

    /**
     * The most retries the SNAP-4 backoff admits within {@code elapsedNanos}: retry k+1 follows a sleep of at
     * least {@code b_k / 2} ms (integer ms, as SourceSession computes it), {@code b_k = min(max, min·2^k)}.
     */
    static long retriesAdmitted(long elapsedNanos, SessionConfig c) {
        long b = c.snapshotRetryBackoffMinMs();
        long slept = 0;
        long k = 0;
        while (true) {
            long next = slept + TimeUnit.MILLISECONDS.toNanos(b / 2);
            if (next > elapsedNanos) {
                return k;
            }
            slept = next;
            k++;
            b = Math.min(c.snapshotRetryBackoffMaxMs(), b * 2);
        }
    }

    /** SNAP-13 at one sample: no view of the source, owner not installed, coverage not complete, no candidates. */
    private static void assertDegraded(SessionWorld.RequesterNode r, SessionWorld.SourceNode s, List<StateKey> probe, long begins) {
        assertThat(SessionWorld.cursor(r, s)).as("SNAP-13: no view of the source is installed during the storm (after %d begins)", begins)
                .isEmpty();
        OwnerViewStatus owner = owner(r, s.incarnation);
        assertThat(owner.state()).as("SNAP-13: owner state during the storm: " + owner)
                .isIn(OwnerState.AWAITING, OwnerState.BOOTSTRAPPING);
        assertThat(r.index.coverage()).as("SNAP-13: coverage during the storm").isEqualTo(Coverage.PartialHints);
        LookupOutcome o = r.index.lookup(probe);
        assertThat(o).isInstanceOf(LookupOutcome.Candidates.class);
        LookupOutcome.Candidates c = (LookupOutcome.Candidates) o;
        assertThat(c.coverage()).as("SNAP-13: lookup coverage for keys of the degraded source").isEqualTo(Coverage.PartialHints);
        for (KeyCandidates kc : c.keys()) {
            assertThat(kc.replicas()).as("SNAP-11: staging rows are never served (key %s)", kc.key()).isEmpty();
        }
    }

    private static OwnerViewStatus owner(SessionWorld.RequesterNode r, Incarnation source) {
        return r.index.ownerStatus(16, Optional.empty()).owners().stream().filter(o -> o.owner().equals(source)).findFirst()
                .orElseThrow(() -> new AssertionError("no owner status for " + source));
    }

    /** After recovery: installed at the head, equal to the oracle, owner INSTALLED, coverage complete, lookups resolve. */
    private static void assertRecoveredView(SessionWorld.RequesterNode r, SessionWorld.SourceNode s, long head) {
        Map<JournalModel.Residence, JournalModel.Generation> expected = s.model.stateAt(head, r.scope);
        Map<JournalModel.Residence, JournalModel.Generation> actual = new java.util.HashMap<>();
        List<StateKey> all = new ArrayList<>();
        for (int i = 0; i < residentKeys(); i++) {
            all.add(residentKey(i));
        }
        Coverage coverage = null;
        for (int i = 0; i < all.size(); i += 128) {
            LookupOutcome o = r.index.lookup(all.subList(i, Math.min(all.size(), i + 128)));
            assertThat(o).isInstanceOf(LookupOutcome.Candidates.class);
            LookupOutcome.Candidates c = (LookupOutcome.Candidates) o;
            coverage = c.coverage();
            for (KeyCandidates kc : c.keys()) {
                assertThat(kc.replicas()).as("SNAP-13: after recovery key %s resolves to the source", kc.key()).isNotEmpty();
                for (Replica rep : kc.replicas()) {
                    assertThat(rep.owner()).isEqualTo(s.incarnation);
                    actual.put(new JournalModel.Residence(kc.key(), rep.medium()),
                            new JournalModel.Generation(rep.sequence(), rep.sizeBytes()));
                }
            }
        }
        assertThat(actual).as("SNAP-5: the recovered view at %d equals the source's resident map", head).isEqualTo(expected);
        assertThat(coverage).as("coverage after recovery").isEqualTo(Coverage.CompleteAtWatermarks);
        OwnerViewStatus owner = owner(r, s.incarnation);
        assertThat(owner.state()).as("owner after recovery: " + owner).isEqualTo(OwnerState.INSTALLED);
        assertThat(owner.watermark()).isEqualTo(head);
    }

    static long snapshotBegins(SessionWorld.SourceNode s) {
        return s.server.metrics().sent(orbitkv.inventory.wire.SourceFrame.BodyCase.SNAPSHOT_BEGIN);
    }

    /**
     * Load generation: one put per period on a fixed schedule (parking between puts), recording every put's
     * duration. Bounded: at most {@link #MAX_PUTS} durations are kept.
     */
    static final class PacedWriter {
        static final int MAX_PUTS = 1 << 16;
        private final long periodNanos;
        private final LongConsumer put;
        private final long[] durations = new long[MAX_PUTS];
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Thread thread;
        private volatile int count;
        private volatile Throwable failure;

        PacedWriter(String name, long periodNanos, LongConsumer put) {
            this.periodNanos = periodNanos;
            this.put = put;
            this.thread = Thread.ofPlatform().name(name).daemon().unstarted(this::run);
        }

        void start() {
            thread.start();
        }

        private void run() {
            try {
                long next = System.nanoTime();
                for (long i = 0; running.get() && i < MAX_PUTS; i++) {
                    next += periodNanos;
                    long wait = next - System.nanoTime();
                    if (wait > 0) {
                        LockSupport.parkNanos(wait);
                    }
                    long t0 = System.nanoTime();
                    put.accept(i);
                    durations[(int) i] = System.nanoTime() - t0;
                    count = (int) i + 1;
                }
            } catch (Throwable t) {
                failure = t;
            }
        }

        void stop() throws InterruptedException {
            running.set(false);
            if (!thread.join(Duration.ofSeconds(5))) {
                throw new AssertionError(thread.getName() + " did not stop within 5 s: a put is blocked (SNAP-13)");
            }
        }

        void rethrow() {
            if (failure != null) {
                throw new AssertionError(thread.getName() + " failed", failure);
            }
        }

        long count() {
            return count;
        }

        long maxNanos() {
            long m = 0;
            for (int i = 0; i < count; i++) {
                m = Math.max(m, durations[i]);
            }
            return m;
        }

        long quantileNanos(double q) {
            long[] c = java.util.Arrays.copyOf(durations, count);
            java.util.Arrays.sort(c);
            return c.length == 0 ? 0 : c[(int) Math.min(c.length - 1, Math.round(q * (c.length - 1)))];
        }
    }
}
