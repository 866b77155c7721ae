package orbitkv.inventory.session;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
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
import orbitkv.inventory.InventorySubscriber;
import orbitkv.inventory.Interval;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.Scope;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.SubscriptionStatus;
import orbitkv.inventory.ViewReceiver;
import orbitkv.inventory.wire.InventorySessionGrpc;
import orbitkv.inventory.wire.Liveness;
import orbitkv.inventory.wire.OpenAccepted;
import orbitkv.inventory.wire.OpenMode;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * How a requester gets back to its source after a path failure (campaign regression row 2). The receive
 * deadline: a stream that brings no source frame for
 * {@link RequesterSession#SILENT_LIVENESS_INTERVALS_MAX} liveness intervals is cancelled and replaced, so an
 * installed view is resumed instead of staying past its freshness budget behind a stream that looks alive
 * (DELTA-13, IDX-12). The fault is injected by the source itself: a scripted InventorySession on loopback
 * gRPC that answers the Open (or not) and then says nothing, over a TCP connection that stays healthy, which is
 * what no transport error can reveal. Before the deadline existed the session sat in CONNECTING or STREAMING
 * with one connect forever, and these awaits failed. The reconnect pacing: after a refused connection the
 * channel's own connect backoff (1 s growing to 120 s, invisible in status) is reset, so the requester's
 * documented backoff decides when a healed path is tried again.
 */
@Tag("unit")
class RequesterPathRecoveryTest {
    private static final ClusterIdentity CLUSTER = new ClusterIdentity("silence", new UUID(5, 5));
    /** Liveness 40 ms: the deadline is 120 ms; the awaits are bounded far above it. */
    private static final SessionConfig CONFIG = SessionConfig.defaults().withLivenessIntervalMs(40).withBackoffMs(2, 20, 2, 20);
    private static final Duration BOUND = Duration.ofSeconds(20);

    /** What the scripted source does after an Open. */
    enum Script {
        /** Never answers: the requester stays in Opening. */
        NO_ANSWER,
        /** Accepts (bootstrap) and then sends nothing, neither a snapshot nor liveness. */
        ACCEPT_THEN_SILENT,
        /** Accepts and then sends liveness every interval, as a healthy idle source does (DELTA-13). */
        ACCEPT_THEN_LIVENESS,
        /**
         * Accepts, then sends one large frame (a liveness frame padded to {@value #PADDED_FRAME_BYTES} bytes with an
         * unknown field, standing for a snapshot page), then liveness: over a slow path the large frame takes many
         * receive deadlines to arrive.
         */
        ACCEPT_THEN_LARGE_FRAME
    }

    /** The padded frame's size and its liveness head (how the receiver recognizes it). */
    static final int PADDED_FRAME_BYTES = 512 << 10;
    static final long PADDED_HEAD = 77;
    /**
     * Liveness 100 ms: the deadline is 300 ms. Over the slow path the padded frame takes about 2 s, about 7 receive
     * deadlines, while one 16 KiB HTTP/2 DATA frame (the granularity at which gRPC reads a message) takes about 62 ms.
     */
    private static final SessionConfig SLOW_CONFIG = SessionConfig.defaults().withLivenessIntervalMs(100).withBackoffMs(2, 20, 2, 20);

    private final Incarnation self = new Incarnation(new NodeId("req"), new NodeEpoch(1), UUID.randomUUID());
    private final Incarnation source = new Incarnation(new NodeId("src"), new NodeEpoch(1), UUID.randomUUID());
    private final AtomicInteger opens = new AtomicInteger();
    private final AtomicInteger cancelled = new AtomicInteger();
    private final AtomicLong livenessSent = new AtomicLong();
    private final AtomicInteger paddedReceived = new AtomicInteger();
    private final List<CountingChannel> channels = new CopyOnWriteArrayList<>();
    /** The next this many {@code newCall}s on a test channel throw (a channel bug, injected). */
    private final AtomicInteger failNextCalls = new AtomicInteger();
    private Server server;
    private InventorySubscriber subscriber;

    @AfterEach
    void close() throws InterruptedException {
        if (subscriber != null) {
            subscriber.close();
        }
        channels.forEach(CountingChannel::shutdownNow);
        if (server != null) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    @DisplayName("DELTA-13 IDX-12 an Open the source never answers is cancelled after three liveness intervals and opened again")
    void unansweredOpenIsReplaced() throws Exception {
        start(Script.NO_ANSWER);
        await("a second Open after the first went unanswered", () -> opens.get() >= 2 && cancelled.get() >= 1);
        assertThat(peer().lastErrorCause()).isEqualTo(RequesterCore.RECEIVE_SILENCE_CAUSE);
    }

    @Test
    @DisplayName("DELTA-13 IDX-12 an accepted stream that goes silent is cancelled at the source and replaced by a new one")
    void silentAcceptedStreamIsReplaced() throws Exception {
        start(Script.ACCEPT_THEN_SILENT);
        await("the silent stream cancelled and a new Open sent", () -> opens.get() >= 2 && cancelled.get() >= 1);
        assertThat(peer().lastErrorCause()).isEqualTo(RequesterCore.RECEIVE_SILENCE_CAUSE);
        assertThat(peer().connects()).isGreaterThanOrEqualTo(2);
        assertThat(channels.getFirst().idles.get()).as("the silent connection is dropped, not reused").isPositive();
    }

    @Test
    @DisplayName("IDX-12 a refused connection resets the channel's connect backoff: the requester's own backoff paces reconnects, so a healed path is used again within it")
    void refusedConnectionResetsTheChannelBackoff() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort(); // closed again: connections to it are refused
        }
        subscribe(new Endpoint("127.0.0.1", port));
        await("three refused streams, each resetting the channel's backoff", () -> channels.getFirst().resets.get() >= 3);
        assertThat(peer().lastErrorCause()).isEqualTo("TRANSPORT_UNAVAILABLE");
        assertThat(peer().connects()).isGreaterThanOrEqualTo(3);
    }

    @Test
    @DisplayName("DELTA-13 a channel that throws while a stream opens ends that stream only: the connect loop goes on and opens the next")
    void throwingOpenDoesNotEndTheLoop() throws Exception {
        failNextCalls.set(1);
        start(Script.ACCEPT_THEN_LIVENESS);
        await("an Open after the failed one, on the same session", () -> opens.get() >= 1);
        assertThat(peer().connects()).isGreaterThanOrEqualTo(2);
        await("the second stream accepted", () -> peer().state() == SubscriptionStatus.State.BOOTSTRAPPING);
    }

    @Test
    @DisplayName("DELTA-13 a source that sends liveness keeps its one stream: the deadline counts silence, not idleness (issue 38: the core on virtual time, no thread races)")
    void livenessKeepsTheStream() {
        CoreDriver d = new CoreDriver(CONFIG);
        d.resumed();
        long interval = TimeUnit.MILLISECONDS.toNanos(CONFIG.livenessIntervalMs());
        // 25 intervals of liveness are more than eight receive deadlines: any false expiry would have replaced the stream.
        for (long n = 2; n <= 26; n++) {
            d.now += interval;
            assertThat(d.core.onTimer(d.now)).as("no expiry one interval after the last frame").isEmpty();
            SourceFrame live = SourceFrame.newBuilder().setSessionId(Wire.uuid(d.stream)).setFrameNumber(n)
                    .setLiveness(Liveness.newBuilder().setSourceHead(7)).build();
            assertThat(d.core.onFrame(d.stream, d.now, new Inbound.Parsed<>(live, live.getSerializedSize()))).isEmpty();
        }
        assertThat(d.core.connects()).isEqualTo(1);
        assertThat(d.core.lastErrorCause()).isEmpty();
        assertThat(d.core.state()).isInstanceOf(RequesterState.Streaming.class);
        assertThat(d.core.onTimer(d.now + RequesterCore.SILENT_LIVENESS_INTERVALS_MAX * interval))
                .as("silence after the last liveness still ends the stream").first().isInstanceOf(RequesterCore.Effect.Abandon.class);
    }

    @Test
    @DisplayName("DELTA-13 IDX-12 a large frame arriving slowly is not silence: its bytes count as they arrive, so a slow path keeps its stream (issue 38: the core on virtual time, no thread races)")
    void slowLargeFrameKeepsTheStream() {
        CoreDriver d = new CoreDriver(SLOW_CONFIG);
        d.resumed();
        long deadline = TimeUnit.MILLISECONDS.toNanos(SLOW_CONFIG.livenessIntervalMs()) * RequesterCore.SILENT_LIVENESS_INTERVALS_MAX;
        // The padded frame takes about 2 s over the slow path (about 7 receive deadlines); each 16 KiB DATA frame of it
        // arrives every 62 ms, and the stream tracer reports each arrival (noteArrival).
        long chunk = TimeUnit.MILLISECONDS.toNanos(62);
        long arrivals = (long) PADDED_FRAME_BYTES / (16 << 10);
        for (long i = 0; i < arrivals; i++) {
            d.now += chunk;
            d.core.noteArrival(d.stream, d.now);
            assertThat(d.core.onTimer(d.now)).as("no expiry while the frame's bytes arrive").isEmpty();
        }
        assertThat(arrivals * chunk).as("the frame took several receive deadlines").isGreaterThan(6 * deadline);
        SourceFrame padded = SourceFrame.newBuilder().setSessionId(Wire.uuid(d.stream)).setFrameNumber(2)
                .setLiveness(Liveness.newBuilder().setSourceHead(PADDED_HEAD)).build();
        assertThat(d.core.onFrame(d.stream, d.now, new Inbound.Parsed<>(padded, PADDED_FRAME_BYTES))).isEmpty();
        assertThat(d.core.connects()).as("one stream: never replaced while the frame's bytes arrived").isEqualTo(1);
        assertThat(d.core.lastErrorCause()).isEmpty();
        assertThat(d.core.onTimer(d.now + deadline - 1)).as("the deadline counts from the frame's end").isEmpty();
        assertThat(d.core.onTimer(d.now + deadline)).first().isInstanceOf(RequesterCore.Effect.Abandon.class);
    }

    private SubscriptionStatus.PeerSession peer() {
        return subscriber.status().sessions().getFirst();
    }

    private void start(Script script) throws Exception {
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new ScriptedSource(script)).build().start();
        subscribe(new Endpoint("127.0.0.1", server.getPort()));
    }

    private void subscribe(Endpoint peer) {
        subscribe(peer, CONFIG);
    }

    private void subscribe(Endpoint peer, SessionConfig config) {
        subscriber = InventorySubscriber.create(CLUSTER, self, Scope.all(), new NothingReceiver(), e -> {
            CountingChannel c = new CountingChannel(NettyChannelBuilder.forAddress(e.host(), e.port()).usePlaintext().build(),
                    failNextCalls);
            channels.add(c);
            return c;
        }, config);
        subscriber.onMembership(new TwoMembers(List.of(new Member(self, peer, peer, ClusterIdentity.PROTOCOL),
                new Member(source, peer, peer, ClusterIdentity.PROTOCOL))));
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        orbitkv.testing.Await.inJvm(what, BOUND, condition);
    }

    /** The scripted source end: numbers its frames from 1 in the Open's session, as a real source does (SES-12). */
    private final class ScriptedSource extends InventorySessionGrpc.InventorySessionImplBase {
        private final Script script;

        ScriptedSource(Script script) {
            this.script = script;
        }

        @Override
        public StreamObserver<RequesterFrame> session(StreamObserver<SourceFrame> out) {
            ServerCallStreamObserver<SourceFrame> call = (ServerCallStreamObserver<SourceFrame>) out;
            call.setOnCancelHandler(cancelled::incrementAndGet);
            return new StreamObserver<>() {
                @Override
                public void onNext(RequesterFrame f) {
                    if (!f.hasOpen()) {
                        return;
                    }
                    opens.incrementAndGet();
                    if (script == Script.NO_ANSWER) {
                        return;
                    }
                    out.onNext(SourceFrame.newBuilder().setSessionId(f.getSessionId()).setFrameNumber(1)
                            .setAccepted(OpenAccepted.newBuilder().setMode(OpenMode.OPEN_MODE_BOOTSTRAP)
                                    .setWindowBytes(f.getOpen().getReceiveWindowBytes())).build());
                    if (script == Script.ACCEPT_THEN_LARGE_FRAME) {
                        synchronized (call) {
                            out.onNext(SourceFrame.newBuilder().setSessionId(f.getSessionId()).setFrameNumber(2)
                                    .setLiveness(Liveness.newBuilder().setSourceHead(PADDED_HEAD))
                                    .setUnknownFields(UnknownFieldSet.newBuilder().addField(999, UnknownFieldSet.Field
                                            .newBuilder().addLengthDelimited(ByteString.copyFrom(new byte[PADDED_FRAME_BYTES]))
                                            .build()).build()).build());
                        }
                    }
                    if (script == Script.ACCEPT_THEN_LIVENESS) {
                        Thread.ofVirtual().start(() -> liveness(call, f, 2));
                    } else if (script == Script.ACCEPT_THEN_LARGE_FRAME) {
                        Thread.ofVirtual().start(() -> liveness(call, f, 3));
                    }
                }

                @Override
                public void onError(Throwable t) {
                    // the requester cancelled: counted by the cancel handler
                }

                @Override
                public void onCompleted() {
                    out.onCompleted();
                }
            };
        }

        private void liveness(ServerCallStreamObserver<SourceFrame> call, RequesterFrame open, long first) {
            try {
                for (long n = first; !call.isCancelled(); n++) {
                    Thread.sleep(CONFIG.livenessIntervalMs()); // the scripted source's liveness pace (DELTA-13)
                    synchronized (call) {
                        if (!call.isCancelled()) {
                            call.onNext(SourceFrame.newBuilder().setSessionId(open.getSessionId()).setFrameNumber(n)
                                    .setLiveness(Liveness.newBuilder().setSourceHead(0)).build());
                            livenessSent.incrementAndGet();
                        }
                    }
                }
            } catch (InterruptedException | RuntimeException e) {
                // the call ended
            }
        }
    }

    /** A real channel that counts the recovery calls the session makes on it. */
    private static final class CountingChannel extends ManagedChannel {
        private final ManagedChannel delegate;
        final AtomicInteger resets = new AtomicInteger();
        final AtomicInteger idles = new AtomicInteger();

        private final AtomicInteger failNextCalls;

        CountingChannel(ManagedChannel delegate, AtomicInteger failNextCalls) {
            this.delegate = delegate;
            this.failNextCalls = failNextCalls;
        }

        @Override
        public void resetConnectBackoff() {
            resets.incrementAndGet();
            delegate.resetConnectBackoff();
        }

        @Override
        public void enterIdle() {
            idles.incrementAndGet();
            delegate.enterIdle();
        }

        @Override
        public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
            if (failNextCalls.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                throw new IllegalStateException("injected: newCall failed");
            }
            return delegate.newCall(method, options);
        }

        @Override
        public String authority() {
            return delegate.authority();
        }

        @Override
        public ConnectivityState getState(boolean requestConnection) {
            return delegate.getState(requestConnection);
        }

        @Override
        public void notifyWhenStateChanged(ConnectivityState source, Runnable callback) {
            delegate.notifyWhenStateChanged(source, callback);
        }

        @Override
        public ManagedChannel shutdown() {
            delegate.shutdown();
            return this;
        }

        @Override
        public ManagedChannel shutdownNow() {
            delegate.shutdownNow();
            return this;
        }

        @Override
        public boolean isShutdown() {
            return delegate.isShutdown();
        }

        @Override
        public boolean isTerminated() {
            return delegate.isTerminated();
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
            return delegate.awaitTermination(timeout, unit);
        }
    }

    /** A receiver with nothing installed; a bootstrap that never begins calls nothing else. */
    private final class NothingReceiver implements ViewReceiver {
        @Override
        public StageOutcome beginStaging(Incarnation s, UUID v, ScopeDigest d, long s0, long frame) {
            throw new AssertionError("no snapshot is sent");
        }

        @Override
        public StageOutcome stagePage(Incarnation s, UUID v, long page, long frame, RecordBatch records) {
            throw new AssertionError("no snapshot is sent");
        }

        @Override
        public DeltaOutcome applyDelta(Incarnation s, UUID v, long frame, Interval interval, RecordBatch records) {
            throw new AssertionError("no delta is sent");
        }

        @Override
        public CommitOutcome commit(Incarnation s, UUID v, CommitMarker marker) {
            throw new AssertionError("no snapshot is sent");
        }

        @Override
        public void discardStaging(Incarnation s, ResetCause cause) {
        }

        @Override
        public Optional<InstalledCursor> installedCursor(Incarnation s) {
            return Optional.empty();
        }

        @Override
        public void observeLiveness(Incarnation s, long head) {
            if (head == PADDED_HEAD) {
                paddedReceived.incrementAndGet();
            }
        }
    }

    /** A valid view admitting exactly {@code members}. */
    private record TwoMembers(Collection<Member> members) implements MembershipView {
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
