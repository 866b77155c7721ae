package orbitkv.inventory.session;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.Interval;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySessionServer;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.InventorySubscriber;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.Scope;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.SourceSessionStatus;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.SubscriptionStatus;
import orbitkv.inventory.ViewReceiver;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.membership.ProtocolClock;
import orbitkv.testing.ManualClock;

/**
 * A real source end and a real requester end on loopback gRPC, each on its own {@link ManualClock} (issue 25):
 * time moves only when the test advances a clock, so a timer's effect can be asserted at the exact virtual
 * instant it falls due. Threads still run for real (the pump, the connect loop, gRPC), so the test awaits their
 * effects with {@link #await}, bounded by {@link #BOUND}; while virtual time stands still nothing timed happens.
 */
final class ClockedSessions implements AutoCloseable {
    static final ClusterIdentity CLUSTER = new ClusterIdentity("clocked", new UUID(25, 1));
    /** Generous: only real scheduling and loopback I/O happen in real time. */
    static final Duration BOUND = Duration.ofSeconds(30);
    /** Start of both virtual clocks: far from 0, so nothing depends on the origin. */
    static final long ORIGIN_NANOS = 1L << 40;

    final ManualClock sourceTime = new ManualClock(ORIGIN_NANOS);
    final ManualClock requesterTime;
    final InventorySource source;
    final Recorder receiver = new Recorder();
    private final Incarnation sourceId = new Incarnation(new NodeId("src"), new NodeEpoch(1), UUID.randomUUID());
    private final Incarnation requesterId = new Incarnation(new NodeId("req"), new NodeEpoch(1), UUID.randomUUID());
    private final List<ManagedChannel> channels = new CopyOnWriteArrayList<>();
    private final Server server;
    private final InventorySessionServer sessions;
    private final InventorySubscriber subscriber;

    /**
     * @param sharedClock one clock for both ends (a test of cadence), or each end its own (a test of silence)
     */
    ClockedSessions(InventoryConfig inventory, SessionConfig config, boolean sharedClock) throws Exception {
        this.requesterTime = sharedClock ? sourceTime : new ManualClock(ORIGIN_NANOS);
        this.source = InventorySource.create(inventory);
        this.sessions = InventorySessionServer.create(source, CLUSTER, sourceId, () -> view, config, adapt(sourceTime));
        this.server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(sessions.bindableService())
                .build().start();
        Endpoint peer = new Endpoint("127.0.0.1", server.getPort());
        view = new View(List.of(new Member(requesterId, peer, peer, ClusterIdentity.PROTOCOL),
                new Member(sourceId, peer, peer, ClusterIdentity.PROTOCOL)));
        this.subscriber = InventorySubscriber.create(CLUSTER, requesterId, Scope.all(), receiver, e -> {
            ManagedChannel c = NettyChannelBuilder.forAddress(e.host(), e.port()).usePlaintext().build();
            channels.add(c);
            return c;
        }, config, adapt(requesterTime));
        subscriber.onMembership(view);
    }

    /** The view both ends read; set before the requester starts (the source reads it at Open). */
    private volatile View view;

    /** The one-line adapter from the test artifact's clock to the contract (the artifact depends on java.base only). */
    static ProtocolClock adapt(ManualClock clock) {
        return new ProtocolClock() {
            @Override
            public long nanoTime() {
                return clock.nanoTime();
            }

            @Override
            public Scheduled schedule(Runnable task, long delayNanos) {
                return clock.schedule(task, delayNanos)::cancel;
            }
        };
    }

    SubscriptionStatus.PeerSession peer() {
        return subscriber.status().sessions().getFirst();
    }

    Optional<SourceSessionStatus> sourceSession() {
        return sessions.status().stream().findFirst();
    }

    /** Awaits {@code condition} in real time, bounded by {@link #BOUND}; the failure names what was awaited. */
    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        orbitkv.testing.Await.inJvm(what, BOUND, condition);
    }

    /** Awaits until {@code clock} has a task due exactly {@code delayNanos} from its now (a waiter armed its timer). */
    static void awaitArmed(String what, ManualClock clock, long delayNanos) throws InterruptedException {
        await(what + " armed at +" + delayNanos + " ns of virtual time (pending " + clock.pendingDelaysNanos() + ")",
                () -> clock.pendingDelaysNanos().contains(delayNanos));
    }

    @Override
    public void close() throws InterruptedException {
        subscriber.close();
        sessions.close();
        channels.forEach(ManagedChannel::shutdownNow);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    /** Accepts every snapshot and delta; counts what arrived. */
    static final class Recorder implements ViewReceiver {
        final AtomicInteger installs = new AtomicInteger();
        final AtomicInteger deltas = new AtomicInteger();
        final AtomicInteger liveness = new AtomicInteger();
        final AtomicLong appliedThrough = new AtomicLong();
        private volatile InstalledCursor installed;

        /** Installs {@code at} as if a snapshot had committed it (a core driven without a source). */
        void install(InstalledCursor at) {
            installed = at;
        }

        @Override
        public StageOutcome beginStaging(Incarnation s, UUID v, ScopeDigest d, long s0, long frame) {
            return new StageOutcome.Staged(0);
        }

        @Override
        public StageOutcome stagePage(Incarnation s, UUID v, long page, long frame, RecordBatch records) {
            return new StageOutcome.Staged(records.size());
        }

        @Override
        public synchronized DeltaOutcome applyDelta(Incarnation s, UUID v, long frame, Interval interval, RecordBatch records) {
            if (installed != null && v.equals(installed.viewId())) {
                installed = new InstalledCursor(v, interval.to());
                appliedThrough.set(interval.to());
                deltas.incrementAndGet();
            }
            return new DeltaOutcome.Applied(interval.to());
        }

        @Override
        public synchronized CommitOutcome commit(Incarnation s, UUID v, CommitMarker marker) {
            installed = new InstalledCursor(v, marker.s1());
            installs.incrementAndGet();
            return new CommitOutcome.Installed(v, marker.s1(), 0);
        }

        @Override
        public void discardStaging(Incarnation s, ResetCause cause) {
        }

        @Override
        public Optional<InstalledCursor> installedCursor(Incarnation s) {
            return Optional.ofNullable(installed);
        }

        @Override
        public void observeLiveness(Incarnation s, long head) {
            liveness.incrementAndGet();
        }
    }

    /** A valid view admitting exactly {@code members}. */
    private record View(Collection<Member> members) implements MembershipView {
        @Override
        public ClusterIdentity cluster() {
            return CLUSTER;
        }

        @Override
        public long revision() {
            return 1;
        }

        @Override
        public boolean valid() {
            return true;
        }

        @Override
        public Optional<Member> member(NodeId nodeId) {
            return members.stream().filter(m -> m.nodeId().equals(nodeId)).findFirst();
        }

        @Override
        public boolean isAdmitted(Incarnation incarnation) {
            return members.stream().anyMatch(m -> m.incarnation().equals(incarnation));
        }
    }
}
