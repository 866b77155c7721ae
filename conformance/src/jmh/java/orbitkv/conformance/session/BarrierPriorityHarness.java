package orbitkv.conformance.session;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import orbitkv.conformance.peer.StaticMembership;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.Interval;
import orbitkv.inventory.InventorySessionServer;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.InventorySubscriber;
import orbitkv.inventory.Medium;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.Scope;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.ViewReceiver;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.testing.Await;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * ROUTE-10 evaluation (issue 39 item 5, the Evaluation's second bullet): one source serves a bulk bootstrap (a large
 * snapshot) to requester A while requester B, subscribed to another namespace and already streaming, asks explicit
 * barriers (a put, then {@code flushThrough} through it). Reported: B's barrier time to completion (the put, then
 * the flushThrough call → B's receiver applied the delta covering the target) with the source's send priority on and off, same trace,
 * same permits ({@code sendStepsConcurrentMax}, default 1 here: a saturated source; {@code -Dbench.bulk=N}: N bulk
 * requesters bootstrapping at once), runs alternating the order of
 * the modes. A sample counts only if A's bootstrap was still running when the barrier completed. Everything on
 * loopback gRPC in one JVM, null receivers (the source's send work, not index apply, is what is scheduled).
 *
 * <p>Run: {@code mvn -o -B -ntp -pl conformance -am verify -Dorbitkv.test.groups=qualification
 * -Dtest=BarrierPriorityHarness -Dsurefire.failIfNoSpecifiedTests=false [-Dbench.residences=1000000]
 * [-Dbench.runs=10] [-Dbench.barriers=20] [-Dbench.permits=1] [-Dbench.bulk=1] [-Dbench.modes=priority,fifo]}. Modes: {@code priority}
 * (priority on), {@code fifo} (priority off: first come first served), {@code default} (priority on with the default
 * {@code sendStepsConcurrentMax}). Never part of the default run (qualification lane).
 */
@Tag("qualification")
@Timeout(value = 2, unit = TimeUnit.HOURS)
class BarrierPriorityHarness {
    static final Namespace BULK = Namespace.utf8("bench/bulk");
    static final Namespace URGENT = Namespace.utf8("bench/urgent");

    @Test
    void run() throws Exception {
        int residences = Integer.getInteger("bench.residences", 1_000_000);
        int runs = Integer.getInteger("bench.runs", 10);
        int barriers = Integer.getInteger("bench.barriers", 20);
        int bulks = Integer.getInteger("bench.bulk", 1);
        int permits = Integer.getInteger("bench.permits", 1);
        List<String> modes = List.of(System.getProperty("bench.modes", "priority,fifo").split(","));
        System.out.printf(Locale.ROOT, "== ROUTE-10 barrier vs %d bulk bootstrap(s): %,d residences, %d runs x %d barriers, permits %d,"
                + " modes %s, %d cpus, load %s ==%n", bulks, residences, runs, barriers, permits, modes,
                Runtime.getRuntime().availableProcessors(), loadAverage());
        runOnce("warm-up", residences / 4, 5, permits, modes.getFirst(), bulks); // JIT: not reported
        List<List<Double>> runMedians = new ArrayList<>();
        List<List<Double>> samples = new ArrayList<>();
        int[] invalid = new int[modes.size()];
        for (int m = 0; m < modes.size(); m++) {
            runMedians.add(new ArrayList<>());
            samples.add(new ArrayList<>());
        }
        for (int r = 0; r < runs; r++) {
            for (int k = 0; k < modes.size(); k++) {
                int m = (r % 2 == 0) ? k : modes.size() - 1 - k; // order-balanced
                Run out = runOnce("run " + (r + 1), residences, barriers, permits, modes.get(m), bulks);
                invalid[m] += out.invalid;
                samples.get(m).addAll(out.millis);
                if (!out.millis.isEmpty()) {
                    runMedians.get(m).add(median(out.millis));
                }
            }
        }
        System.out.printf(Locale.ROOT, "%n| mode | runs | median of run medians (ms) | run medians min–max (ms) | all samples p50 / p90 / max (ms)"
                + " | samples (invalid) |%n|---|---|---|---|---|---|%n");
        for (int m = 0; m < modes.size(); m++) {
            List<Double> rm = runMedians.get(m);
            List<Double> all = samples.get(m);
            System.out.printf(Locale.ROOT, "| %s | %d | %.3f | %.3f–%.3f | %.3f / %.3f / %.3f | %d (%d) |%n", modes.get(m), rm.size(),
                    median(rm), quantile(rm, 0), quantile(rm, 1), median(all), quantile(all, 0.9), quantile(all, 1), all.size(),
                    invalid[m]);
        }
        if (modes.size() >= 2) {
            System.out.printf(Locale.ROOT, "ratio %s / %s of the medians of run medians: %.2f; load at end %s%n", modes.get(1),
                    modes.get(0), median(runMedians.get(1)) / median(runMedians.get(0)), loadAverage());
        }
    }

    record Run(List<Double> millis, int invalid) {}

    private Run runOnce(String label, int residences, int barriers, int permits, String mode, int bulks) throws Exception {
        SessionConfig cfg = switch (mode) {
            case "priority" -> SessionConfig.defaults().withSendScheduling(permits, true, Set.of());
            case "fifo" -> SessionConfig.defaults().withSendScheduling(permits, false, Set.of());
            case "default" -> SessionConfig.defaults();
            default -> throw new IllegalArgumentException("bench.modes: priority, fifo or default, not " + mode);
        };
        try (World w = new World(residences, cfg, bulks)) {
            w.publish(false);
            Await.inJvm("B installed", Duration.ofMinutes(2), () -> w.barrier.through() >= w.source.headSequence());
            System.gc(); // the world's construction garbage is not collected during the measurement
            w.publish(true); // A joins: its bulk bootstrap starts
            Await.inJvm("A's first page", Duration.ofMinutes(2), () -> w.bulk.stream().allMatch(a -> a.pages > 0));
            List<Double> ms = new ArrayList<>();
            int invalid = 0;
            for (int b = 0; b < barriers; b++) {
                // the target is armed before the put: the coalescing window may deliver the delta before the flush
                long want = w.source.headSequence() + 1; // this harness is the source's only writer
                w.barrier.target = want;
                long t0 = System.nanoTime();
                long seq = ((MutationResult.Recorded) w.source.put(SessionWorld.blockKey(URGENT, b + 1), Medium.DRAM, 4096))
                        .record().sequence();
                if (seq != want) {
                    throw new IllegalStateException("put got sequence " + seq + ", expected " + want);
                }
                if (!w.requesterB.flushThrough(w.sourceInc, seq)) {
                    throw new IllegalStateException("B has no accepted session to flush");
                }
                Await.inJvm("barrier " + seq, Duration.ofMinutes(1), () -> w.barrier.reachedNanos != 0);
                long done = w.barrier.reachedNanos;
                w.barrier.reachedNanos = 0;
                if (w.bulk.stream().anyMatch(a -> a.committedNanos != 0 && a.committedNanos < done)) {
                    invalid++; // A's bootstrap had ended: not a barrier against bulk work
                } else {
                    ms.add((done - t0) / 1e6);
                }
            }
            System.out.printf(Locale.ROOT, "  %s %s: barriers %s ms, invalid %d, A committed %s%n", label, mode,
                    ms.stream().map(d -> String.format(Locale.ROOT, "%.2f", d)).toList(), invalid,
                    w.bulk.stream().anyMatch(a -> a.committedNanos != 0));
            return new Run(ms, invalid);
        }
    }

    static double median(List<Double> v) {
        return quantile(v, 0.5);
    }

    static double quantile(List<Double> v, double q) {
        if (v.isEmpty()) {
            return Double.NaN;
        }
        double[] a = v.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        double pos = q * (a.length - 1);
        int lo = (int) Math.floor(pos);
        int hi = (int) Math.ceil(pos);
        return a[lo] + (a[hi] - a[lo]) * (pos - lo);
    }

    static String loadAverage() {
        try {
            return Arrays.stream(Files.readString(Path.of("/proc/loadavg")).split(" ")).limit(3).toList().toString();
        } catch (IOException e) {
            return "n/a";
        }
    }

    /** B's receiver: stamps when its installed watermark first covers {@code target}. */
    static final class BarrierReceiver extends Delegating {
        volatile long target = Long.MAX_VALUE;
        volatile long reachedNanos;
        private volatile long through = -1;

        long through() {
            return through;
        }

        @Override
        void installed(long watermark) {
            through = watermark;
            if (watermark >= target && reachedNanos == 0) {
                reachedNanos = System.nanoTime();
                target = Long.MAX_VALUE;
            }
        }
    }

    /** A's receiver: counts pages, stamps its commit. */
    static final class BulkReceiver extends Delegating {
        volatile long pages;
        volatile long committedNanos;

        @Override
        public StageOutcome stagePage(Incarnation s, UUID v, long o, long f, RecordBatch r) {
            pages++;
            return super.stagePage(s, v, o, f, r);
        }

        @Override
        void installed(long watermark) {
            if (committedNanos == 0) {
                committedNanos = System.nanoTime();
            }
        }
    }

    /** The harness's null receiver ({@link SessionBenchHarness.NullReceiver}) with a hook at every installation. */
    abstract static class Delegating implements ViewReceiver {
        private final SessionBenchHarness.NullReceiver inner = new SessionBenchHarness.NullReceiver();

        abstract void installed(long watermark);

        @Override
        public StageOutcome beginStaging(Incarnation s, UUID v, ScopeDigest d, long s0, long f) {
            return inner.beginStaging(s, v, d, s0, f);
        }

        @Override
        public StageOutcome stagePage(Incarnation s, UUID v, long o, long f, RecordBatch r) {
            return inner.stagePage(s, v, o, f, r);
        }

        @Override
        public DeltaOutcome applyDelta(Incarnation s, UUID v, long f, Interval i, RecordBatch r) {
            DeltaOutcome o = inner.applyDelta(s, v, f, i, r);
            if (inner.installedCursor(s).map(c -> c.viewId().equals(v)).orElse(false)) {
                installed(i.to());
            }
            return o;
        }

        @Override
        public CommitOutcome commit(Incarnation s, UUID v, CommitMarker m) {
            CommitOutcome o = inner.commit(s, v, m);
            installed(m.s1());
            return o;
        }

        @Override
        public void discardStaging(Incarnation s, ResetCause c) {
            inner.discardStaging(s, c);
        }

        @Override
        public Optional<InstalledCursor> installedCursor(Incarnation s) {
            return inner.installedCursor(s);
        }

        @Override
        public void observeLiveness(Incarnation s, long h) {
            inner.observeLiveness(s, h);
        }
    }

    /** One source with a large BULK snapshot; B subscribed to URGENT; A (all namespaces) joins on {@link #publish}. */
    static final class World implements AutoCloseable {
        final InventorySource source = InventorySource.create(SessionBenchHarness.inventory());
        final Incarnation sourceInc = new Incarnation(new NodeId("src"), new NodeEpoch(1), UUID.randomUUID());
        final List<Incarnation> incA = new ArrayList<>();
        final Incarnation incB = new Incarnation(new NodeId("req-barrier"), new NodeEpoch(1), UUID.randomUUID());
        final InventorySessionServer server;
        final Server grpc;
        final List<BulkReceiver> bulk = new ArrayList<>();
        final BarrierReceiver barrier = new BarrierReceiver();
        final List<InventorySubscriber> requesterA = new ArrayList<>();
        final InventorySubscriber requesterB;
        final List<ManagedChannel> channels = new ArrayList<>();
        volatile StaticMembership view = StaticMembership.of(SessionWorld.CLUSTER, 1, List.of());

        World(int residences, SessionConfig cfg, int bulks) throws IOException {
            for (int i = 0; i < residences; i++) {
                source.put(SessionWorld.blockKey(BULK, i), i % 2 == 0 ? Medium.DRAM : Medium.SSD, 4096);
            }
            source.put(SessionWorld.blockKey(URGENT, 0), Medium.DRAM, 4096);
            server = InventorySessionServer.create(source, SessionWorld.CLUSTER, sourceInc, () -> view, cfg);
            grpc = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(server.bindableService())
                    .build().start();
            for (int a = 0; a < bulks; a++) {
                incA.add(new Incarnation(new NodeId("req-bulk-" + a), new NodeEpoch(1), UUID.randomUUID()));
                bulk.add(new BulkReceiver());
                requesterA.add(subscriber(incA.getLast(), Scope.all(), bulk.getLast()));
            }
            requesterB = subscriber(incB, Scope.of(List.of(URGENT)), barrier);
        }

        private InventorySubscriber subscriber(Incarnation inc, Scope scope, ViewReceiver receiver) {
            return InventorySubscriber.create(SessionWorld.CLUSTER, inc, scope, receiver, e -> {
                ManagedChannel c = NettyChannelBuilder.forAddress(e.host(), e.port()).usePlaintext().build();
                synchronized (channels) {
                    channels.add(c);
                }
                return c;
            }, SessionConfig.defaults());
        }

        /** Publishes the source, B, and A too when {@code withBulk}; A learns of the source only then. */
        void publish(boolean withBulk) {
            List<Member> members = new ArrayList<>();
            members.add(StaticMembership.member(sourceInc, new Endpoint("127.0.0.1", grpc.getPort())));
            members.add(StaticMembership.member(incB, new Endpoint("127.0.0.1", 1)));
            if (withBulk) {
                incA.forEach(a -> members.add(StaticMembership.member(a, new Endpoint("127.0.0.1", 1))));
            }
            view = StaticMembership.of(SessionWorld.CLUSTER, withBulk ? 3 : 2, members);
            server.onMembership(view);
            requesterB.onMembership(view);
            if (withBulk) {
                requesterA.forEach(a -> a.onMembership(view));
            }
        }

        @Override
        public void close() throws Exception {
            requesterA.forEach(InventorySubscriber::close);
            requesterB.close();
            server.close();
            synchronized (channels) {
                channels.forEach(ManagedChannel::shutdownNow);
            }
            grpc.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
