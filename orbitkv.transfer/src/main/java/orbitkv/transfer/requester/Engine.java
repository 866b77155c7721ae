package orbitkv.transfer.requester;

import com.google.common.util.concurrent.MoreExecutors;
import io.netty.handler.ssl.SslContext;
import orbitkv.transfer.DataChannelTls;
import orbitkv.transfer.frame.TlsContexts;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import orbitkv.inventory.Medium;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.transfer.AuthorizeOutcome;
import orbitkv.transfer.AuthorizeOutcome.AuthorizeFailure;
import orbitkv.transfer.Backend;
import orbitkv.transfer.BackendPolicy;
import orbitkv.transfer.BlockResult;
import orbitkv.transfer.Destination;
import orbitkv.transfer.Grant;
import orbitkv.transfer.GrantRequest;
import orbitkv.transfer.ReadHandle;
import orbitkv.transfer.ReadResult;
import orbitkv.transfer.ReadRefusal;
import orbitkv.transfer.ReleaseOutcome;
import orbitkv.transfer.PeerRouteClass;
import orbitkv.transfer.SharedMemoryFallback;
import orbitkv.transfer.SourceLoad;
import orbitkv.transfer.TransferConfig;
import orbitkv.transfer.TransferEngine;
import orbitkv.transfer.TransferEngineStatus;
import orbitkv.transfer.TransferTransport;
import orbitkv.transfer.frame.EventLoops;
import orbitkv.transfer.frame.BoundedMessage;
import orbitkv.transfer.frame.CountBytesWindow;
import orbitkv.transfer.frame.HostIdentity;
import orbitkv.transfer.frame.WireCodec;
import orbitkv.transfer.wire.AuthorizeRequest;
import orbitkv.transfer.wire.AuthorizeResponse;
import orbitkv.transfer.wire.ReleaseRequest;
import orbitkv.transfer.wire.ReleaseResponse;
import orbitkv.transfer.wire.TransferAuthorizationGrpc;

/** {@link TransferEngine}: admission, backend choice, READ bookkeeping and release ordering. */
public final class Engine implements TransferEngine {
    private final TransferConfig config;
    private final ClusterIdentity cluster;
    private final Supplier<Incarnation> self;
    private final Function<Endpoint, io.grpc.Channel> peerChannels;
    private final LongSupplier clock;
    private final UUID bootId;
    private final CountBytesWindow window;
    private final EngineCounters counters = new EngineCounters();
    private final ConcurrentHashMap<UUID, IssuedGrant> grants = new ConcurrentHashMap<>();
    private final TcpReader tcp;
    private final SharedArenas arenas;
    private final SharedMemoryReader shm;
    private final AtomicLong readIds = new AtomicLong();
    private final MethodDescriptor<ReleaseRequest, ReleaseResponse> releaseMethod;
    /**
     * Where each source incarnation takes AUTHORIZE frames (issue 37 item 5): its data endpoint, learned from its
     * first gRPC grant, or {@link #NO_DATA_AUTHORIZE} once it refused the frame. At most
     * {@link #DATA_ENDPOINTS_KNOWN_MAX} entries: a full map is cleared (each source's next Authorize goes over gRPC
     * once and is learned again), so restarted incarnations never accumulate.
     */
    private final ConcurrentHashMap<Incarnation, Endpoint> dataEndpoints = new ConcurrentHashMap<>();
    static final int DATA_ENDPOINTS_KNOWN_MAX = 1024;
    /** Marks a source incarnation that answered an AUTHORIZE with MALFORMED: asked over gRPC only. */
    private static final Endpoint NO_DATA_AUTHORIZE = new Endpoint("no-data-authorize.invalid", 1);
    /** The group this engine built for itself and stops on close; null when a test lent one. */
    private final EventLoopGroup ownedGroup;
    private volatile boolean closed;

    Engine(TransferConfig config, ClusterIdentity cluster, Supplier<Incarnation> self,
            Function<Endpoint, io.grpc.Channel> peerChannels, EventLoopGroup group,
            Class<? extends io.netty.channel.Channel> socketChannel, LongSupplier clock, UUID bootId, ChunkCopier copier,
            EventLoopGroup ownedGroup, SslContext tls) {
        this.ownedGroup = ownedGroup;
        this.config = Objects.requireNonNull(config);
        this.cluster = Objects.requireNonNull(cluster);
        this.self = Objects.requireNonNull(self);
        this.peerChannels = Objects.requireNonNull(peerChannels);
        this.clock = Objects.requireNonNull(clock);
        this.bootId = bootId;
        this.window = new CountBytesWindow("receive window", config.readsInFlightMax(), config.receiveInFlightBytesMax());
        this.tcp = new TcpReader(Objects.requireNonNull(group), Objects.requireNonNull(socketChannel),
                config.connectionsPerSourceMax(), config.readsPerConnectionMax(), config.connectTimeoutMs(), clock, tls);
        this.arenas = new SharedArenas(config.sharedArenasMappedMax());
        this.shm = new SharedMemoryReader(config.sharedMemoryChunkBytes(), clock, copier);
        this.releaseMethod = TransferAuthorizationGrpc.getReleaseMethod().toBuilder(
                ProtoUtils.marshaller(ReleaseRequest.getDefaultInstance()),
                ProtoUtils.marshaller(ReleaseResponse.getDefaultInstance())).build();
    }

    public static TransferEngine create(TransferConfig config, ClusterIdentity cluster, Supplier<Incarnation> self,
            Function<Endpoint, io.grpc.Channel> peerChannels, TransferTransport transport, LongSupplier clock) {
        return create(config, cluster, self, peerChannels, transport, clock, null);
    }

    /** As above; {@code tls} non-null runs the data connections over TLS (issue 33). */
    public static TransferEngine create(TransferConfig config, ClusterIdentity cluster, Supplier<Incarnation> self,
            Function<Endpoint, io.grpc.Channel> peerChannels, TransferTransport transport, LongSupplier clock,
            DataChannelTls tls) {
        SslContext context;
        try {
            context = tls == null ? null : TlsContexts.client(tls);
        } catch (javax.net.ssl.SSLException e) {
            throw new IllegalArgumentException("data channel TLS files cannot be used: " + e.getMessage(), e);
        }
        EventLoopGroup group = EventLoops.newGroup(Objects.requireNonNull(transport), config.requesterEventLoopThreads(),
                "orbitkv-transfer-requester");
        try {
            return new Engine(config, cluster, self, peerChannels, group, EventLoops.socketChannel(transport), clock,
                    HostIdentity.bootId(), ChunkCopier.PLAIN, group, context);
        } catch (RuntimeException e) {
            EventLoops.shutdown(group);
            throw e;
        }
    }

    // ---------------------------------------------------------------- authorize

    @Override
    public CompletionStage<AuthorizeOutcome> authorize(GrantRequest request) {
        if (closed) {
            return failed(AuthorizeFailure.ENGINE_CLOSED, "the engine is closed");
        }
        if (grants.size() >= config.grantsTrackedMax() && purgeEnded() == 0) {
            return failed(AuthorizeFailure.GRANTS_TRACKED_LIMIT, "grantsTrackedMax (" + config.grantsTrackedMax()
                    + ") grants are tracked");
        }
        Incarnation me = self.get();
        AuthorizeRequest wire = AuthorizeCalls.request(request, me, cluster, bootId);
        MethodDescriptor<AuthorizeRequest, BoundedMessage<AuthorizeResponse>> method = authorizeMethod(request);
        long sentAt = clock.getAsLong();
        CompletableFuture<AuthorizeOutcome> out = new CompletableFuture<>();
        Endpoint data = dataEndpoints.get(request.source().incarnation());
        if (config.dataChannelAuthorize() && data != null && data != NO_DATA_AUTHORIZE
                && authorizeOnDataChannel(request, wire, me, sentAt, data, out)) {
            return out;
        }
        authorizeOverGrpc(request, wire, method, me, sentAt, request.timeout().toNanos(), out);
        return out;
    }

    /**
     * Asks on a data connection to {@code data} (issue 37 item 5): one round trip on the data plane's event loops,
     * and the connection answered is bound to the grant, so the READs that follow on it need no BIND. False when
     * every connection to the source is busy (then gRPC is asked). A source that answers MALFORMED does not take the
     * frame: it is asked over gRPC, now and from then on; a connection lost before the answer is asked over gRPC
     * with the time left (a grant the source issued meanwhile ends at its expiry, as after a failed gRPC call).
     */
    private boolean authorizeOnDataChannel(GrantRequest request, AuthorizeRequest wire, Incarnation me, long sentAt,
            Endpoint data, CompletableFuture<AuthorizeOutcome> out) {
        long deadline = sentAt + request.timeout().toNanos();
        DataAuthorize a = new DataAuthorize(wire.toByteArray(), AuthorizeCalls.responseBytesMax(request.blocks().size()),
                request.source().incarnation().nodeId(), sentAt, deadline, readIds.incrementAndGet());
        if (!tcp.authorize(data, a)) {
            return false;
        }
        a.outcome().thenAccept(o -> {
            switch (o) {
                case DataAuthorize.Outcome.Answered an -> {
                    counters.authorizesOnDataChannel.incrementAndGet();
                    out.complete(outcome(new BoundedMessage.Parsed<>(an.response()), request, me, sentAt));
                }
                case DataAuthorize.Outcome.Stopped s when s.why() instanceof ReadResult.TimedOut -> {
                    counters.authorizeFailures.increment(AuthorizeFailure.DEADLINE_EXCEEDED);
                    out.complete(new AuthorizeOutcome.Failed(AuthorizeFailure.DEADLINE_EXCEEDED,
                            "no answer on the data connection to " + data + " within " + request.timeout()));
                }
                case DataAuthorize.Outcome.Stopped s -> fallBack(request, wire, me, sentAt, data, s.why().toString(), out);
                case DataAuthorize.Outcome.Unsupported u -> {
                    rememberEndpoint(request.source().incarnation(), NO_DATA_AUTHORIZE, true);
                    fallBack(request, wire, me, sentAt, data, u.detail(), out);
                }
            }
        });
        return true;
    }

    private void fallBack(GrantRequest request, AuthorizeRequest wire, Incarnation me, long sentAt, Endpoint data,
            String why, CompletableFuture<AuthorizeOutcome> out) {
        counters.dataChannelAuthorizeFallbacks.incrementAndGet();
        dataEndpoints.remove(request.source().incarnation(), data);
        long left = sentAt + request.timeout().toNanos() - clock.getAsLong();
        if (left <= 0) {
            counters.authorizeFailures.increment(AuthorizeFailure.DEADLINE_EXCEEDED);
            out.complete(new AuthorizeOutcome.Failed(AuthorizeFailure.DEADLINE_EXCEEDED, "the data connection to "
                    + data + " gave no answer (" + why + ") and no time is left for gRPC"));
            return;
        }
        authorizeOverGrpc(request, wire, authorizeMethod(request), me, sentAt, left, out);
    }

    private static MethodDescriptor<AuthorizeRequest, BoundedMessage<AuthorizeResponse>> authorizeMethod(
            GrantRequest request) {
        return TransferAuthorizationGrpc.getAuthorizeMethod().toBuilder(
                ProtoUtils.marshaller(AuthorizeRequest.getDefaultInstance()),
                BoundedMessage.marshaller(AuthorizeResponse.parser(),
                        AuthorizeCalls.responseBytesMax(request.blocks().size()))).build();
    }

    private void authorizeOverGrpc(GrantRequest request, AuthorizeRequest wire,
            MethodDescriptor<AuthorizeRequest, BoundedMessage<AuthorizeResponse>> method, Incarnation me, long sentAt,
            long timeoutNanos, CompletableFuture<AuthorizeOutcome> out) {
        io.grpc.Channel channel;
        try {
            channel = peerChannels.apply(request.source().peer());
        } catch (RuntimeException e) {
            counters.authorizeFailures.increment(AuthorizeFailure.UNAVAILABLE);
            out.complete(new AuthorizeOutcome.Failed(AuthorizeFailure.UNAVAILABLE, "no channel to "
                    + request.source().peer() + ": " + e));
            return;
        }
        // The answer is decoded and the stage completed on the event loop: outcome() only checks, counts and records.
        ClientCalls.asyncUnaryCall(channel.newCall(method, CallOptions.DEFAULT.withExecutor(MoreExecutors.directExecutor())
                .withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS)), wire, new StreamObserver<>() {
                    @Override
                    public void onNext(BoundedMessage<AuthorizeResponse> value) {
                        out.complete(outcome(value, request, me, sentAt));
                    }

                    @Override
                    public void onError(Throwable t) {
                        Status s = Status.fromThrowable(t);
                        AuthorizeFailure f = s.getCode() == Status.Code.DEADLINE_EXCEEDED
                                ? AuthorizeFailure.DEADLINE_EXCEEDED : AuthorizeFailure.UNAVAILABLE;
                        counters.authorizeFailures.increment(f);
                        out.complete(new AuthorizeOutcome.Failed(f, s.toString()));
                    }

                    @Override
                    public void onCompleted() {}
                });
    }

    private AuthorizeOutcome outcome(BoundedMessage<AuthorizeResponse> value, GrantRequest request, Incarnation me,
            long sentAt) {
        AuthorizeResponse r = switch (value) {
            case BoundedMessage.Parsed<AuthorizeResponse> p -> p.message();
            case BoundedMessage.Oversized<AuthorizeResponse> o -> null;
            case BoundedMessage.Unparseable<AuthorizeResponse> u -> null;
        };
        if (r == null) {
            return violation("unreadable or oversized response: " + value, null, request, me);
        }
        Optional<SourceLoad> load = load(r, request);
        AuthorizeOutcome refusal = AuthorizeCalls.refusal(r, load);
        if (refusal != null) {
            if (refusal instanceof AuthorizeOutcome.Refused rf) {
                counters.authorizeRefusals.increment(rf.reason());
            } else {
                counters.authorizeFailures.increment(AuthorizeFailure.PROTOCOL_VIOLATION);
            }
            return refusal;
        }
        AuthorizeCalls.Answer a;
        try {
            a = AuthorizeCalls.answer(r.getAuthorized(), request);
        } catch (AuthorizeCalls.Violation v) {
            return violation(v.getMessage(), v.grantId, request, me);
        }
        for (BlockResult b : a.blocks()) {
            if (b instanceof BlockResult.Refused rf) {
                counters.authorizeRefusals.increment(rf.reason());
            }
        }
        if (a.grantId() == null) {
            counters.authorizeNothingGranted.incrementAndGet();
            return new AuthorizeOutcome.NothingGranted(a.blocks().stream()
                    .map(b -> (BlockResult.Refused) b).toList(), load);
        }
        learnDataEndpoint(request.source().incarnation(), a.data());
        long deadline = sentAt + a.expiry().toNanos() - TimeUnit.MILLISECONDS.toNanos(config.grantSafetyMarginMs());
        boolean sameHost = bootId != null && bootId.equals(a.sourceBootId());
        IssuedGrant g = new IssuedGrant(this, a.grantId(), a.secret(), request.source(), a.data(), a.expiry(), deadline, a.blocks(),
                a.arenaOffsets(), sameHost ? a.arena() : null, sameHost, a.releaseAfterLastRead());
        grants.put(g.id(), g);
        counters.authorizeGranted.incrementAndGet();
        return new AuthorizeOutcome.Granted(g, load);
    }

    /** Remembers where {@code source} takes AUTHORIZE frames, unless it refused them; bounded (see the map). */
    private void learnDataEndpoint(Incarnation source, Endpoint data) {
        rememberEndpoint(source, data, false);
    }

    /**
     * Every insertion into {@link #dataEndpoints}, under one lock: a check of the size and the insertion that follows
     * it cannot interleave with another learner's, so the map never holds more than {@link #DATA_ENDPOINTS_KNOWN_MAX}.
     */
    private void rememberEndpoint(Incarnation source, Endpoint data, boolean replace) {
        synchronized (dataEndpoints) {
            if (!dataEndpoints.containsKey(source) && dataEndpoints.size() >= DATA_ENDPOINTS_KNOWN_MAX) {
                dataEndpoints.clear();
            }
            if (replace) {
                dataEndpoints.put(source, data);
            } else {
                dataEndpoints.putIfAbsent(source, data);
            }
        }
    }

    /**
     * The answer's load summary (ROUTE-9), checked: it must be measured by an incarnation of the node asked. A
     * malformed one is dropped and counted; it never changes the outcome (it is evidence, not part of the answer).
     */
    private Optional<SourceLoad> load(AuthorizeResponse r, GrantRequest request) {
        if (!r.hasLoad()) {
            return Optional.empty();
        }
        try {
            SourceLoad l = WireCodec.load(r.getLoad(), request.source().incarnation().nodeId());
            counters.loadSummariesReceived.incrementAndGet();
            return Optional.of(l);
        } catch (WireCodec.WireException e) {
            counters.loadSummariesRejected.incrementAndGet();
            return Optional.empty();
        }
    }

    private AuthorizeOutcome violation(String detail, UUID grantId, GrantRequest request, Incarnation me) {
        counters.authorizeFailures.increment(AuthorizeFailure.PROTOCOL_VIOLATION);
        if (grantId != null) { // the source pinned something we cannot use: give it back now, not at expiry
            sendRelease(request.source().peer(), AuthorizeCalls.release(grantId, me, cluster));
        }
        return new AuthorizeOutcome.Failed(AuthorizeFailure.PROTOCOL_VIOLATION, detail);
    }

    private CompletionStage<AuthorizeOutcome> failed(AuthorizeFailure f, String detail) {
        counters.authorizeFailures.increment(f);
        return CompletableFuture.completedFuture(new AuthorizeOutcome.Failed(f, detail));
    }

    /** Forgets grants past their local deadline with no READ in flight; returns how many. */
    private int purgeEnded() {
        long now = clock.getAsLong();
        int n = 0;
        for (IssuedGrant g : List.copyOf(grants.values())) {
            if (now - g.localDeadlineNanos() >= 0 && g.idle() && grants.remove(g.id(), g)) {
                n++;
            }
        }
        return n;
    }

    // ---------------------------------------------------------------- read

    @Override
    public ReadHandle read(Grant grant, int block, Destination destination, BackendPolicy policy, Duration timeout) {
        IssuedGrant g = own(grant);
        Objects.checkIndex(block, g.blocks().size());
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(policy, "policy");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        if (closed) {
            return refuse(ReadRefusal.ENGINE_CLOSED, "the engine is closed");
        }
        if (!(g.blocks().get(block) instanceof BlockResult.Granted granted)) {
            return refuse(ReadRefusal.BLOCK_NOT_GRANTED, "block " + block + " was refused by the source");
        }
        if (destination.capacityBytes() < granted.lengthBytes()) {
            return refuse(ReadRefusal.DESTINATION_TOO_SMALL, "destination of " + destination.capacityBytes()
                    + " bytes for a block of " + granted.lengthBytes());
        }
        Medium medium = granted.ref().medium();
        SharedMemory shared = policy == BackendPolicy.SHARED_MEMORY_PREFERRED ? sharedMemory(g, block, medium)
                : new SharedMemory(SharedMemoryFallback.NONE, null);
        SharedMemoryFallback fallback = shared.fallback();
        SharedArenas.Mapping mapping = shared.mapping();
        TcpReader.Lease lease = null;
        if (mapping == null) {
            lease = tcp.reserve(g.data, g.id(), granted.lengthBytes());
            if (lease == null) {
                return refuse(closed ? ReadRefusal.ENGINE_CLOSED : ReadRefusal.CONNECTIONS_EXHAUSTED,
                        "connectionsPerSourceMax (" + config.connectionsPerSourceMax() + ") connections to " + g.data
                                + " are busy");
            }
        }
        long now = clock.getAsLong();
        ReadRefusal state = g.startRead(block, now);
        CountBytesWindow.Full full = state == null ? window.tryAdd(1, granted.lengthBytes()) : CountBytesWindow.Full.NONE;
        if (state != null || full != CountBytesWindow.Full.NONE) {
            if (state == null) {
                release(g, g.readEnded(block, true, false));
            }
            if (mapping != null) {
                arenas.release(mapping);
            } else {
                tcp.unreserve(lease);
            }
            return state != null ? refuse(state, "grant " + g.id() + ": " + state)
                    : full == CountBytesWindow.Full.COUNT
                            ? refuse(ReadRefusal.READS_IN_FLIGHT_LIMIT, "readsInFlightMax (" + config.readsInFlightMax()
                                    + ") READs are in flight")
                            : refuse(ReadRefusal.CREDITS_EXHAUSTED, "receiveInFlightBytesMax ("
                                    + config.receiveInFlightBytesMax() + ") cannot take " + granted.lengthBytes()
                                    + " more bytes; " + window.bytes() + " in flight");
        }
        counters.readsAdmitted.incrementAndGet();
        if (fallback != SharedMemoryFallback.NONE) {
            counters.fallbacks.increment(fallback);
        }
        Read read = new Read(this, g, block, destination, granted.lengthBytes(), granted.crc32c(),
                PeerRouteClass.of(medium), mapping != null ? Backend.SHARED_MEMORY : Backend.TCP, fallback, now,
                now + timeout.toNanos(), readIds.incrementAndGet());
        if (mapping != null) {
            shm.run(read, arenas, mapping);
        } else {
            tcp.run(read, lease);
        }
        return read;
    }

    /** The shared-memory route of a READ: the arena mapping it reads from, or why it falls back to TCP. */
    private record SharedMemory(SharedMemoryFallback fallback, SharedArenas.Mapping mapping) {}

    /** For {@code SHARED_MEMORY_PREFERRED}: the arena mapping of block {@code block}, else the named fallback. */
    private SharedMemory sharedMemory(IssuedGrant g, int block, Medium medium) {
        if (medium == Medium.SSD) {
            return new SharedMemory(SharedMemoryFallback.SSD_RESIDENT, null);
        }
        if (!g.sameHost) {
            return new SharedMemory(SharedMemoryFallback.OTHER_HOST, null);
        }
        if (g.arena == null || g.arenaOffsets[block] < 0) {
            return new SharedMemory(SharedMemoryFallback.ARENA_UNAVAILABLE, null);
        }
        try {
            return new SharedMemory(SharedMemoryFallback.NONE, arenas.acquire(g.arena));
        } catch (SharedArenas.Unavailable e) {
            return new SharedMemory(SharedMemoryFallback.ARENA_UNAVAILABLE, null);
        }
    }

    private ReadHandle refuse(ReadRefusal reason, String detail) {
        counters.readRefusals.increment(reason);
        return Read.refused(new ReadResult.Refused(reason, detail));
    }

    /** Called by {@link Read#finish} once, after the READ physically stopped. */
    void terminated(Read read, ReadResult o) {
        window.release(1, read.length);
        counters.readsTerminated.incrementAndGet();
        switch (o) {
            case ReadResult.Completed c -> counters.completed(c.backend(), c.route(), c.bytes(), c.latencyNanos());
            case ReadResult.Refused r -> counters.readRefusals.increment(r.reason());
            case ReadResult.Failed f -> counters.readFailures.increment(f.reason());
            case ReadResult.TimedOut t -> counters.timedOut.incrementAndGet();
            case ReadResult.Cancelled c -> counters.cancelled.incrementAndGet();
        }
        boolean overTcp = o instanceof ReadResult.Completed c && c.backend() == Backend.TCP;
        release(read.grant, read.grant.readEnded(read.index, o instanceof ReadResult.Refused, overTcp));
    }

    private IssuedGrant own(Grant grant) {
        if (grant instanceof IssuedGrant g && g.engine == this) {
            return g;
        }
        throw new IllegalArgumentException("grant " + grant + " was not issued by this engine");
    }

    // ---------------------------------------------------------------- release

    @Override
    public CompletionStage<ReleaseOutcome> release(Grant grant) {
        IssuedGrant g = own(grant);
        release(g, g.requestRelease());
        return g.releaseFuture();
    }

    /**
     * Carries out a release decision of {@code g}: a Release call, or none when the source already ended the grant at
     * its last send (release-after-last-read, issue 37 item 5: the grant's pins went with that send, INV-8/INV-9).
     */
    private void release(IssuedGrant g, IssuedGrant.ReleaseAction action) {
        switch (action) {
            case NONE -> { }
            case SEND -> sendRelease(g);
            case FOLDED -> {
                grants.remove(g.id(), g);
                counters.releasesFolded.incrementAndGet();
                g.releaseFuture().complete(new ReleaseOutcome.Released());
            }
        }
    }

    private void sendRelease(IssuedGrant g) {
        sendRelease(g.source.peer(), AuthorizeCalls.release(g.id(), self.get(), cluster)).whenComplete((o, e) -> {
            grants.remove(g.id(), g);
            g.releaseFuture().complete(o);
        });
    }

    private CompletableFuture<ReleaseOutcome> sendRelease(Endpoint peer, ReleaseRequest request) {
        CompletableFuture<ReleaseOutcome> out = new CompletableFuture<>();
        try {
            io.grpc.Channel channel = peerChannels.apply(peer);
            ClientCalls.asyncUnaryCall(channel.newCall(releaseMethod, CallOptions.DEFAULT.withDeadlineAfter(
                    config.authorizeTimeoutMs(), TimeUnit.MILLISECONDS)), request, new StreamObserver<>() {
                        @Override
                        public void onNext(ReleaseResponse r) {
                            out.complete(switch (r.getStatus()) {
                                case RELEASED -> new ReleaseOutcome.Released();
                                case GRANT_UNKNOWN -> new ReleaseOutcome.AlreadyEnded();
                                default -> new ReleaseOutcome.NotConfirmed(r.getStatus() + ": " + r.getDetail());
                            });
                        }

                        @Override
                        public void onError(Throwable t) {
                            out.complete(new ReleaseOutcome.NotConfirmed(Status.fromThrowable(t).toString()));
                        }

                        @Override
                        public void onCompleted() {}
                    });
        } catch (StatusRuntimeException | IllegalStateException e) {
            out.complete(new ReleaseOutcome.NotConfirmed(e.toString()));
        }
        return out.whenComplete((o, e) -> {
            if (o instanceof ReleaseOutcome.NotConfirmed) {
                counters.releasesNotConfirmed.incrementAndGet();
            } else {
                counters.releasesConfirmed.incrementAndGet();
            }
        });
    }

    // ---------------------------------------------------------------- status, close

    @Override
    public TransferEngineStatus status() {
        return new TransferEngineStatus(counters.routes(), counters.readsAdmitted.get(), counters.readsTerminated.get(),
                counters.readRefusals.snapshot(), counters.readFailures.snapshot(),
                counters.readFailures.get(orbitkv.transfer.ReadFailure.CHECKSUM_MISMATCH), counters.timedOut.get(),
                counters.cancelled.get(), counters.fallbacks.snapshot(), window.bytes(), window.count(),
                counters.authorizeGranted.get(), counters.authorizeNothingGranted.get(),
                counters.authorizeRefusals.snapshot(), counters.authorizeFailures.snapshot(), grants.size(),
                counters.releasesConfirmed.get(), counters.releasesNotConfirmed.get(), arenas.mapped(),
                counters.loadSummariesReceived.get(), counters.loadSummariesRejected.get(), counters.releasesFolded.get(),
                counters.authorizesOnDataChannel.get(), counters.dataChannelAuthorizeFallbacks.get());
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        tcp.close();
        shm.close();
        arenas.close();
        for (IssuedGrant g : List.copyOf(grants.values())) {
            release(g, g.requestRelease());
        }
        if (ownedGroup != null) {
            EventLoops.shutdown(ownedGroup); // after the connections closed: their outcomes ran on it
        }
    }

    /** Payload bytes the TCP backend copied from transport buffers instead of receiving in place. */
    long tcpCopiedBytes() {
        return tcp.copiedBytes();
    }

    /** For tests: an engine with another boot id (another host) or a fault-injecting copier. */
    public static Engine createForTest(TransferConfig config, ClusterIdentity cluster, Supplier<Incarnation> self,
            Function<Endpoint, io.grpc.Channel> peerChannels, EventLoopGroup group,
            Class<? extends io.netty.channel.Channel> socketChannel, LongSupplier clock, UUID bootId, ChunkCopier copier) {
        return new Engine(config, cluster, self, peerChannels, group, socketChannel, clock, bootId, copier, null, null);
    }

    /** As above, with TLS data connections when {@code tls} is non-null. */
    public static Engine createForTest(TransferConfig config, ClusterIdentity cluster, Supplier<Incarnation> self,
            Function<Endpoint, io.grpc.Channel> peerChannels, EventLoopGroup group,
            Class<? extends io.netty.channel.Channel> socketChannel, LongSupplier clock, UUID bootId, ChunkCopier copier,
            DataChannelTls tls) throws javax.net.ssl.SSLException {
        return new Engine(config, cluster, self, peerChannels, group, socketChannel, clock, bootId, copier, null,
                tls == null ? null : TlsContexts.client(tls));
    }
}
