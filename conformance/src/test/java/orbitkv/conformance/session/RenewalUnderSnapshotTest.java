package orbitkv.conformance.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.index.KeyCandidates;
import orbitkv.index.LookupOutcome;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySessionServer;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.InventorySubscriber;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.SourceSessionStatus;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Endpoint;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.LeaseStatus;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipAdmin;
import orbitkv.membership.MembershipConfig;
import orbitkv.membership.MembershipEvent;
import orbitkv.membership.NodeId;
import orbitkv.membership.Registrant;
import orbitkv.membership.RegistrationResult;
import orbitkv.testing.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * BND-2 in one JVM, end to end: three members registered on a real etcd with a short lease (one source, two
 * requesters, wired to each other by their real etcd membership views) while the source serializes a large
 * snapshot to both requesters over real loopback gRPC sessions.
 *
 * <p>Clause 1 (renewal never queues behind snapshot serialization): the gap between consecutive confirmed
 * renewal sends ({@link LeaseStatus#lastConfirmedRenewalNanos()}, the module's own monotonic stamps) of every
 * member, over the whole snapshot, stays within {@link #GAP_BOUND_MS}; nobody fences. Clause 2 (HTTP/2 flow
 * control is not the memory budget): each requester's HTTP/2 receive window is {@link #HTTP2_WINDOW_BYTES}, 256
 * times the session's credit window, yet the source's outstanding bytes never exceed the credit window and do
 * reach it (the requesters are the slower side, so the ledger is what held the source back).
 */
@Tag("gate")
class RenewalUnderSnapshotTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    /**
     * TTL 4 s, fence 3 s after the last confirmed renewal send (1 s margin), renewal every 1 s, 500 ms per etcd
     * call, retries 50..500 ms.
     */
    static final MembershipConfig LEASE = new MembershipConfig(4_000, 1_000, 1_000, 500, 50, 500, 512);
    /** Allowance for thread scheduling and GC on two shared cores beyond what the configuration permits. */
    static final long SCHEDULING_TOLERANCE_MS = 250;
    /**
     * A confirmed renewal is answered within {@code etcdCallTimeoutMs} of its send (a later answer is a failed
     * renewal) and the next one is sent {@code renewalIntervalMs} after that answer: consecutive confirmed sends
     * are at most {@code renewalIntervalMs + etcdCallTimeoutMs} apart, plus scheduling. A renewal queued behind
     * serialization of the snapshot would wait for the whole snapshot (seconds) and fence at 3 s.
     */
    static final long GAP_BOUND_MS = LEASE.renewalIntervalMs() + LEASE.etcdCallTimeoutMs() + SCHEDULING_TOLERANCE_MS;

    static final int RESIDENCES = 1_000_000;
    static final int FRAME_BYTES = 16 << 10;
    /** The session's credit window (SES-13): four frames. */
    static final long WINDOW_BYTES = 64 << 10;
    /** Each requester's HTTP/2 receive window: far above the credit window, so it never binds first. */
    static final int HTTP2_WINDOW_BYTES = 16 << 20;
    static final Namespace NS = Namespace.utf8("bnd2/model-a/fp16");
    static final Duration BOUND = Duration.ofSeconds(25);

    static final SessionConfig SESSION = SessionConfig.defaults().withFrameBytesMax(FRAME_BYTES, 4 * FRAME_BYTES)
            .withReceiveWindowBytes(WINDOW_BYTES).withBackoffMs(20, 200, 2, 50);
    static final InventoryConfig INVENTORY = InventoryConfig.defaults().withFrameEncodedBytesMax(FRAME_BYTES)
            .withFrameDecodedBytesMax(4 * FRAME_BYTES).withPageBytesMax(FRAME_BYTES - InventoryConfig.PAGE_FRAME_OVERHEAD_BYTES);

    static StateKey key(long i) {
        return SessionWorld.blockKey(NS, i);
    }

    @Test
    @DisplayName("BND-2 renewals stay on cadence and nobody fences while a large snapshot is serialized; outstanding bytes stay within the credit window, not the HTTP/2 window")
    void renewalUnderSnapshot() throws Exception {
        String cluster = "bnd2-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        EtcdEndpoints etcd = ETCD.endpoints();
        try (MembershipAdmin admin = MembershipAdmin.connect(etcd, cluster, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            assertThat(admin.format()).isInstanceOf(MembershipAdmin.Formatted.class);
        }
        InventorySource source = InventorySource.create(INVENTORY);
        for (int i = 0; i < RESIDENCES; i++) {
            source.put(key(i), i % 2 == 0 ? Medium.DRAM : Medium.SSD, 4096);
        }
        long head = source.headSequence();
        Endpoint advertised = Endpoint.parse("127.0.0.1:7001");
        List<AutoCloseable> closers = new CopyOnWriteArrayList<>(); // the channel factory adds from session threads
        List<MembershipEvent.Fenced> fences = new CopyOnWriteArrayList<>();
        try {
            Membership srcMember = register(etcd, cluster, "src", advertised, closers);
            InventorySessionServer server = InventorySessionServer.create(source, srcMember.cluster(), srcMember.incarnation(),
                    srcMember::view, SESSION);
            closers.add(server);
            Server grpc = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                    .addService(server.bindableService()).build().start();
            closers.add(() -> grpc.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
            Endpoint actual = new Endpoint("127.0.0.1", grpc.getPort());

            List<Membership> reqMembers = new ArrayList<>();
            List<GlobalIndex> indexes = new ArrayList<>();
            List<InventorySubscriber> subscribers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                Membership m = register(etcd, cluster, "req-" + r, new Endpoint("127.0.0.1", 9 + r), closers);
                GlobalIndex index = GlobalIndex.create(m.incarnation(), Scope.all(), IndexConfig.defaults().withIndexBytesMax(1L << 30),
                        System::nanoTime, Runnable::run);
                InventorySubscriber sub = InventorySubscriber.create(m.cluster(), m.incarnation(), Scope.all(), index, peer -> {
                    // The source advertises a placeholder peer address; this factory dials its real listener.
                    Endpoint target = peer.equals(advertised) ? actual : peer;
                    ManagedChannel c = NettyChannelBuilder.forAddress(target.host(), target.port()).usePlaintext()
                            .flowControlWindow(HTTP2_WINDOW_BYTES).build();
                    closers.add(c::shutdownNow);
                    return c;
                }, SESSION);
                closers.add(sub);
                reqMembers.add(m);
                indexes.add(index);
                subscribers.add(sub);
            }
            List<Membership> members = new ArrayList<>(reqMembers);
            members.addFirst(srcMember);
            RenewalRecorder recorder = new RenewalRecorder(members, server);
            closers.add(recorder);

            long cpuStart = processCpuNanos();
            long start = System.nanoTime();
            // Wiring as the Manager does it: every view goes to the session ends and the index; Fenced fences.
            srcMember.addListener(relay(fences, e -> {
                if (e instanceof MembershipEvent.Fenced) {
                    server.fence();
                } else {
                    server.onMembership(e.view());
                }
            }));
            for (int r = 0; r < 2; r++) {
                GlobalIndex index = indexes.get(r);
                InventorySubscriber sub = subscribers.get(r);
                reqMembers.get(r).addListener(relay(fences, e -> {
                    index.onMembership(e.view());
                    sub.onMembership(e.view());
                }));
            }
            for (GlobalIndex index : indexes) {
                Await.until("requester installs the " + RESIDENCES + "-residence snapshot through " + head, BOUND,
                        () -> index.installedCursor(srcMember.incarnation()).map(InstalledCursor::watermark).orElse(-1L) == head);
            }
            long end = System.nanoTime();
            long cpuNanos = processCpuNanos() - cpuStart;
            recorder.close();

            double snapshotMs = (end - start) / 1e6;
            List<SourceSessionStatus> sessions = server.status();
            long peak = sessions.stream().mapToLong(SourceSessionStatus::peakOutstandingBytes).max().orElse(-1);
            long gaugePeak = server.metrics().peakOutstandingCreditBytes();
            System.out.printf("BND-2: snapshot of %,d residences to 2 requesters in %.0f ms; credit window %,d B, HTTP/2 window %,d B; "
                    + "peak outstanding per session %s (gauge %,d B, sampled max %,d B); JVM CPU %.1f s = %.2f cores busy%n",
                    RESIDENCES, snapshotMs, WINDOW_BYTES,
                    HTTP2_WINDOW_BYTES, sessions.stream().map(s -> s.peakOutstandingBytes() + " B").toList(), gaugePeak,
                    recorder.sampledOutstandingMax.get(), cpuNanos / 1e9, cpuNanos / 1e6 / snapshotMs);

            for (Membership m : members) {
                RenewalRecorder.Trace t = recorder.trace(m);
                long maxGapMs = t.maxGapNanos(end) / 1_000_000;
                System.out.printf("BND-2: %s: %d renewals confirmed during the snapshot, %d in all, max gap %d ms (bound %d ms), "
                        + "failed renewals %d%n", m.incarnation().nodeId(), t.sendsWithin(start, end), t.sends.size(), maxGapMs,
                        GAP_BOUND_MS, m.leaseStatus().failedRenewals());
                assertThat(t.missed).as("the sampler saw every confirmed renewal of %s (else gaps are not measurable)",
                        m.incarnation().nodeId()).isZero();
                assertThat(maxGapMs).as("max gap between confirmed renewals of %s, registration through the end of the snapshot, <= renewalIntervalMs (%d) "
                        + "+ etcdCallTimeoutMs (%d) + SCHEDULING_TOLERANCE_MS (%d) = %d ms", m.incarnation().nodeId(),
                        LEASE.renewalIntervalMs(), LEASE.etcdCallTimeoutMs(), SCHEDULING_TOLERANCE_MS, GAP_BOUND_MS)
                        .isLessThanOrEqualTo(GAP_BOUND_MS);
                assertThat(m.fenced()).as("%s fenced", m.incarnation().nodeId()).isFalse();
            }
            assertThat(fences).as("Fenced events").isEmpty();
            assertThat(snapshotMs).as("the snapshot spans at least two renewal intervals (else the test shows nothing)")
                    .isGreaterThanOrEqualTo(2.0 * LEASE.renewalIntervalMs());
            assertThat(recorder.trace(srcMember).sendsWithin(start, end)).as("source renewals confirmed during the snapshot")
                    .isGreaterThanOrEqualTo(2);

            assertThat(sessions).as("one source session per requester").hasSize(2);
            for (SourceSessionStatus s : sessions) {
                assertThat(s.peakOutstandingBytes()).as("peak outstanding credit of %s <= receiveWindowBytes", s.requester().nodeId())
                        .isLessThanOrEqualTo(WINDOW_BYTES)
                        .as("peak outstanding credit of %s reached the window within one frame: the credit ledger, not "
                                + "HTTP/2 (window %d B), held the source back", s.requester().nodeId(), HTTP2_WINDOW_BYTES)
                        .isGreaterThan(WINDOW_BYTES - FRAME_BYTES);
            }
            assertThat(gaugePeak).as("orbitkv_session_peak_outstanding_credit_bytes <= receiveWindowBytes").isLessThanOrEqualTo(WINDOW_BYTES);
            assertThat(recorder.sampledOutstandingMax.get()).as("sampled outstanding bytes <= receiveWindowBytes")
                    .isLessThanOrEqualTo(WINDOW_BYTES);

            for (GlobalIndex index : indexes) {
                LookupOutcome o = index.lookup(List.of(key(0), key(RESIDENCES / 2 + 1), key(RESIDENCES - 1)));
                assertThat(o).isInstanceOf(LookupOutcome.Candidates.class);
                for (KeyCandidates kc : ((LookupOutcome.Candidates) o).keys()) {
                    assertThat(kc.replicas()).as("installed replicas of %s", kc.key())
                            .anyMatch(rep -> rep.owner().equals(srcMember.incarnation()));
                }
            }
        } finally {
            for (AutoCloseable c : closers.reversed()) {
                c.close();
            }
        }
    }

    static Membership register(EtcdEndpoints etcd, String cluster, String node, Endpoint peer, List<AutoCloseable> closers) {
        RegistrationResult r = Membership.register(etcd, new Registrant(cluster, new NodeId(node), peer,
                Endpoint.parse("127.0.0.1:8001")), LEASE);
        assertThat(r).as("registration of %s", node).isInstanceOf(RegistrationResult.Registered.class);
        Membership m = ((RegistrationResult.Registered) r).membership();
        closers.add(m);
        return m;
    }

    /** A listener recording every Fenced event before handing the event on. */
    static Consumer<MembershipEvent> relay(List<MembershipEvent.Fenced> fences, Consumer<MembershipEvent> next) {
        return e -> {
            if (e instanceof MembershipEvent.Fenced f) {
                fences.add(f);
            }
            next.accept(e);
        };
    }

    /** CPU time of this JVM (all threads), from java.base alone. */
    static long processCpuNanos() {
        return ProcessHandle.current().info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
    }

    /**
     * Samples every member's {@link LeaseStatus} and the source's session ledgers every 2 ms on its own platform
     * thread. The renewal times are the membership's own stamps, so a late sample never distorts a gap; a sample
     * that finds the confirmed count advanced by more than one missed a renewal and is counted.
     */
    static final class RenewalRecorder implements AutoCloseable {
        final List<Membership> members;
        final List<Trace> traces = new ArrayList<>();
        final InventorySessionServer server;
        final AtomicLong sampledOutstandingMax = new AtomicLong();
        private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bnd2-renewal-sampler");
            t.setDaemon(true);
            return t;
        });

        RenewalRecorder(List<Membership> members, InventorySessionServer server) {
            this.members = members;
            this.server = server;
            for (Membership m : members) {
                traces.add(new Trace(m.leaseStatus()));
            }
            sampler.scheduleAtFixedRate(this::sample, 0, 2, TimeUnit.MILLISECONDS);
        }

        private void sample() {
            for (int i = 0; i < members.size(); i++) {
                traces.get(i).observe(members.get(i).leaseStatus());
            }
            for (SourceSessionStatus s : server.status()) {
                sampledOutstandingMax.accumulateAndGet(s.outstandingBytes(), Math::max);
            }
        }

        Trace trace(Membership m) {
            return traces.get(members.indexOf(m));
        }

        @Override
        public void close() throws InterruptedException {
            sampler.shutdown();
            if (!sampler.awaitTermination(5, TimeUnit.SECONDS)) {
                throw new AssertionError("renewal sampler did not stop within 5 s");
            }
        }

        /** The confirmed renewal sends of one member, in order (only the sampler thread writes). */
        static final class Trace {
            final List<Long> sends = new CopyOnWriteArrayList<>();
            private long confirmed;
            long missed;

            Trace(LeaseStatus first) {
                sends.add(first.lastConfirmedRenewalNanos());
                confirmed = first.confirmedRenewals();
            }

            void observe(LeaseStatus s) {
                if (s.confirmedRenewals() == confirmed) {
                    return;
                }
                if (s.confirmedRenewals() > confirmed + 1) {
                    missed += s.confirmedRenewals() - confirmed - 1;
                }
                confirmed = s.confirmedRenewals();
                sends.add(s.lastConfirmedRenewalNanos());
            }

            /** The longest gap between consecutive sends, including the open gap from the last send to {@code end}. */
            long maxGapNanos(long end) {
                long max = 0;
                for (int i = 1; i < sends.size(); i++) {
                    max = Math.max(max, sends.get(i) - sends.get(i - 1));
                }
                return Math.max(max, end - sends.getLast());
            }

            long sendsWithin(long start, long end) {
                return sends.stream().filter(t -> t >= start && t <= end).count();
            }
        }
    }
}
