package orbitkv.conformance.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.SourceSessionStatus;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Seeded fault schedules over real gRPC on loopback (DESIGN §10): mutation bursts, disconnects mid-snapshot
 * and mid-delta (a real TCP cut), a journal small enough to be trimmed during snapshots and behind stalled
 * subscribers, stalled subscribers beyond their credit window, sources restarting as new incarnations.
 * Oracle: an independent model of each source's journal; after convergence every requester's installed
 * view equals the source's resident map filtered by scope at the view watermark (ordered, unique, atomic,
 * reliable, resumable; liveness never advances a watermark). Credit conservation is checked at every step:
 * no source ever has more than the window outstanding.
 *
 * <p>{@code -Dorbitkv.schedules=N} sets the count (default 500; the {@code schedules-10k} profile runs
 * 10,000), {@code -Dorbitkv.schedules.seed=S} the first seed. A failure names its seed.
 */
class FaultScheduleTest {
    static final int SCHEDULES = Integer.getInteger("orbitkv.schedules", 500);
    static final long FIRST_SEED = Long.getLong("orbitkv.schedules.seed", 20261129L);
    static final int WINDOW_BYTES = 2 << 10;
    static final Duration CONVERGE = Duration.ofSeconds(30);

    @Test
    @DisplayName("SES-13 SNAP-4 SNAP-8 SNAP-10 DELTA-7 DELTA-10 BND-4 BND-5: seeded fault schedules converge to the journal oracle")
    void schedules() throws Exception {
        long t0 = System.nanoTime();
        Stats stats = new Stats();
        for (int i = 0; i < SCHEDULES; i++) {
            long seed = FIRST_SEED + i;
            try {
                long s0 = System.nanoTime();
                runSchedule(seed, stats);
                if (Boolean.getBoolean("orbitkv.schedules.trace")) {
                    System.out.printf("seed %d: %.1f ms%n", seed, (System.nanoTime() - s0) / 1e6);
                }
            } catch (Throwable e) {
                throw new AssertionError("fault schedule seed=" + seed + " failed (rerun with -Dorbitkv.schedules.seed="
                        + seed + " -Dorbitkv.schedules=1): " + e.getMessage(), e);
            }
        }
        System.out.printf("fault schedules: %d run from seed %d in %.1f s; cuts=%d stalls=%d restarts=%d mutations=%d "
                + "installs=%d trimmed-snapshot-retries=%d%n", SCHEDULES, FIRST_SEED, (System.nanoTime() - t0) / 1e9, stats.cuts,
                stats.stalls, stats.restarts, stats.mutations, stats.installs, stats.trimmedSnapshots);
        assertThat(stats.cuts).isPositive();
        assertThat(stats.stalls).isPositive();
        assertThat(stats.restarts).isPositive();
        assertThat(stats.trimmedSnapshots).as("some snapshots met a trimmed journal (SNAP-4)").isPositive();
    }

    static final class Stats {
        long cuts;
        long stalls;
        long restarts;
        long mutations;
        long installs;
        long trimmedSnapshots;
    }

    static SessionConfig sessionConfig() {
        return SessionWorld.fastConfig().withFrameBytesMax(1 << 10, 4 << 10).withReceiveWindowBytes(WINDOW_BYTES);
    }

    static InventoryConfig inventoryConfig(SplittableRandom rnd) {
        InventoryConfig c = InventoryConfig.defaults().withFrameEncodedBytesMax(1 << 10).withFrameDecodedBytesMax(4 << 10)
                .withPageRecordsMax(1 + rnd.nextInt(8)).withJournalRecordsMax(16 + rnd.nextInt(200))
                .withInputRecordsMax(1 + rnd.nextInt(64));
        return switch (rnd.nextInt(3)) {
            case 0 -> c.withWindow(0, 0);
            case 1 -> c.withWindow(0, 1);
            default -> c;
        };
    }

    static Scope randomScope(SplittableRandom rnd) {
        if (rnd.nextInt(3) == 0) {
            return Scope.all();
        }
        List<Namespace> ns = new ArrayList<>();
        for (Namespace n : SessionWorld.NAMESPACES) {
            if (rnd.nextBoolean()) {
                ns.add(n);
            }
        }
        return Scope.of(ns);
    }

    private void runSchedule(long seed, Stats stats) throws Exception {
        SplittableRandom rnd = new SplittableRandom(seed);
        try (SessionWorld w = new SessionWorld(sessionConfig(), inventoryConfig(rnd))) {
            int sources = 1 + rnd.nextInt(2);
            int requesters = 1 + rnd.nextInt(2);
            for (int i = 0; i < sources; i++) {
                SessionWorld.SourceNode s = w.addSource("src-" + i, 1);
                burst(s, rnd, rnd.nextInt(40), stats);
            }
            for (int i = 0; i < requesters; i++) {
                w.addRequester("req-" + i, randomScope(rnd));
            }
            boolean stalledBootstrap = rnd.nextInt(3) == 0;
            if (stalledBootstrap) {
                for (SessionWorld.SourceNode s : w.sources()) {
                    burst(s, rnd, 300, stats); // a resident map larger than the credit window
                }
            }
            w.publishMembership();
            if (stalledBootstrap) {
                stats.stalls++;
                for (SessionWorld.SourceNode s : w.sources()) {
                    SessionWorld.await("a session opened", CONVERGE, () -> !s.server.status().isEmpty());
                    s.proxy.stall(true); // the bootstrap now waits on credit mid-snapshot
                }
                for (SessionWorld.SourceNode s : w.sources()) {
                    burst(s, rnd, 50 + rnd.nextInt(250), stats); // likely trims (S0, S1] behind the stalled scan
                }
            }
            int steps = 4 + rnd.nextInt(12);
            for (int step = 0; step < steps; step++) {
                SessionWorld.SourceNode s = w.sources().get(rnd.nextInt(w.sources().size()));
                switch (rnd.nextInt(10)) {
                    case 0, 1 -> {
                        s.proxy.cutAll();
                        stats.cuts++;
                    }
                    case 2 -> {
                        s.proxy.stall(true);
                        stats.stalls++;
                    }
                    case 3 -> s.proxy.stall(false);
                    case 4 -> {
                        if (rnd.nextInt(4) == 0) {
                            String node = s.incarnation.nodeId().value();
                            long epoch = s.incarnation.epoch().value() + 1;
                            w.removeSource(s);
                            SessionWorld.SourceNode fresh = w.addSource(node, epoch);
                            burst(fresh, rnd, rnd.nextInt(30), stats);
                            w.publishMembership();
                            stats.restarts++;
                        }
                    }
                    default -> burst(s, rnd, 1 + rnd.nextInt(60), stats);
                }
                assertCreditConserved(w);
                if (rnd.nextInt(3) == 0) {
                    Thread.onSpinWait(); // no sleep: interleavings come from the concurrent sessions
                }
            }
            for (SessionWorld.SourceNode s : w.sources()) {
                s.proxy.stall(false);
            }
            w.awaitConvergedAndCompare(CONVERGE, () -> "seed " + seed);
            assertCreditConserved(w);
            for (SessionWorld.SourceNode s : w.sources()) {
                stats.trimmedSnapshots += s.server.metrics().rejected(orbitkv.inventory.wire.ErrorCause.SNAPSHOT_ABORTED_TRIMMED);
            }
            for (SessionWorld.RequesterNode r : w.requesters()) {
                r.subscriber.status().sessions().forEach(p -> stats.installs += p.installs());
            }
        }
    }

    static void burst(SessionWorld.SourceNode s, SplittableRandom rnd, int n, Stats stats) {
        for (int i = 0; i < n; i++) {
            var key = SessionWorld.key(rnd.nextInt(3), rnd.nextInt(24));
            Medium m = rnd.nextBoolean() ? Medium.DRAM : Medium.SSD;
            if (rnd.nextInt(4) == 0) {
                s.delete(key, m);
            } else {
                s.put(key, m, rnd.nextInt(1 << 20));
            }
            stats.mutations++;
        }
    }

    /** SES-13, BND-4: no source session ever holds more than its window outstanding. */
    static void assertCreditConserved(SessionWorld w) {
        for (SessionWorld.SourceNode s : w.sources()) {
            for (SourceSessionStatus st : s.server.status()) {
                assertThat(st.peakOutstandingBytes()).as("peak outstanding credit of " + st.requester())
                        .isLessThanOrEqualTo(WINDOW_BYTES);
            }
        }
    }
}
