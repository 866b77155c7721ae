package orbitkv.transfer;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.stream.Stream;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.transfer.frame.HostIdentity;
import orbitkv.transfer.requester.ChunkCopier;
import orbitkv.transfer.requester.Engine;
import orbitkv.transfer.source.Source;

/**
 * One source and one requester on loopback, real everything: a {@link TestPayloadSource} over a real arena file
 * in /dev/shm and real SSD files, the source's authorization service on a gRPC server (Netty, native transport),
 * its TCP data listener, and a requester {@link Engine} whose peer channel is a real gRPC channel. Optionally a
 * {@link FaultProxy} in front of the data listener and a {@link FaultCopier} in the shared-memory path.
 */
public final class TransferFixture implements AutoCloseable {
    public static final Namespace NS = Namespace.utf8("model-a/kv");

    public final NativeIo io;
    public final TransferConfig config;
    /** The source's event loops (data listener, gRPC server, proxy), as in its own process. */
    public final EventLoopGroup group;
    /** The requester's event loops (engine connections, gRPC channel), apart from the source's. */
    public final EventLoopGroup requesterGroup;
    public final ClusterIdentity cluster = new ClusterIdentity("transfer-test", UUID.randomUUID());
    public final Incarnation sourceIncarnation = Incarnation.random(new NodeId("source-a"), new NodeEpoch(3));
    public final Incarnation requesterIncarnation = Incarnation.random(new NodeId("requester-b"), new NodeEpoch(5));
    public final TestMembership membership;
    public final Path dir;
    public final TestPayloadSource payloads;
    public final FaultProxy proxy;
    public final FaultCopier copier;
    public final Source source;
    public final Server grpc;
    public final ManagedChannel channel;
    public final Member sourceMember;
    public final Engine engine;

    /** What a test varies. */
    public record Options(NativeIo io, TransferConfig config, boolean proxy, boolean faultCopier, UUID sourceBootId,
            UUID engineBootId, LongSupplier sourceClock, int sourcePinsMax, boolean inlineAuthorization,
            DataChannelTls sourceTls, DataChannelTls engineTls, EgressAccount egressAccount) {
        public static Options defaults(NativeIo io) {
            return new Options(io, testConfig(), false, false, HostIdentity.bootId(), HostIdentity.bootId(),
                    System::nanoTime, 100_000, true, null, null, EgressAccount.NONE);
        }

        public Options withConfig(TransferConfig c) {
            return new Options(io, c, proxy, faultCopier, sourceBootId, engineBootId, sourceClock, sourcePinsMax, inlineAuthorization, sourceTls, engineTls, egressAccount);
        }

        public Options withFaults() {
            return new Options(io, config, true, true, sourceBootId, engineBootId, sourceClock, sourcePinsMax, inlineAuthorization, sourceTls, engineTls, egressAccount);
        }

        public Options withBootIds(UUID source, UUID engine) {
            return new Options(io, config, proxy, faultCopier, source, engine, sourceClock, sourcePinsMax, inlineAuthorization, sourceTls, engineTls, egressAccount);
        }

        public Options withSourceClock(LongSupplier clock) {
            return new Options(io, config, proxy, faultCopier, sourceBootId, engineBootId, clock, sourcePinsMax, inlineAuthorization, sourceTls, engineTls, egressAccount);
        }

        /**
         * Whether the source's Authorize/Release handlers run on the event loop (true, the default: as the Manager's
         * {@code PeerListener.addInlineService}) or on grpc-java's executor (the ablation {@code AuthorizeBenchmark} measures).
         */
        public Options withInlineAuthorization(boolean inline) {
            return new Options(io, config, proxy, faultCopier, sourceBootId, engineBootId, sourceClock, sourcePinsMax, inline, sourceTls, engineTls, egressAccount);
        }

        /** TLS on the data channel (issue 33): the source's and the engine's member certificates. */
        public Options withTls(DataChannelTls source, DataChannelTls engine) {
            return new Options(io, config, proxy, faultCopier, sourceBootId, engineBootId, sourceClock, sourcePinsMax,
                    inlineAuthorization, source, engine, egressAccount);
        }

        public Options withSourcePinsMax(int pins) {
            return new Options(io, config, proxy, faultCopier, sourceBootId, engineBootId, sourceClock, pins, inlineAuthorization, sourceTls, engineTls, egressAccount);
        }

        /** The node-wide account of the source NIC's egress (issue 39 item 2). */
        public Options withEgressAccount(EgressAccount account) {
            return new Options(io, config, proxy, faultCopier, sourceBootId, engineBootId, sourceClock, sourcePinsMax,
                    inlineAuthorization, sourceTls, engineTls, account);
        }
    }

    /** The Manager's largest --block-bytes-max (issue 35): the backends' block-size rows go up to it. */
    public static final long BLOCK_BYTES_CEILING = 128L << 20;

    /**
     * Defaults with small shared-memory chunks (so faults land mid-READ), a short sweep interval and the Manager's
     * block ceiling as the block bound.
     */
    public static TransferConfig testConfig() {
        TransferConfig t = TransferConfig.defaults().withGrantTiming(10_000, 10, 1_000);
        TransferConfig d = t.withWindows(BLOCK_BYTES_CEILING, t.sourceEgressInFlightBytesMax(), t.receiveInFlightBytesMax(),
                t.readsInFlightMax(), t.connectionsPerSourceMax());
        return new TransferConfig(d.authorizeKeysMax(), d.authorizeRequestBytesMax(), d.pinsPerRequesterMax(),
                d.pinnedBytesPerRequesterMax(), d.pinsTotalMax(), d.pinnedBytesTotalMax(), d.prefetchPinnedBytesTotalMax(),
                d.blockBytesMax(), d.grantExpiryMs(), d.expirySweepIntervalMs(), d.sourceEgressInFlightBytesMax(),
                d.receiveInFlightBytesMax(), d.readsInFlightMax(), d.connectionsPerSourceMax(),
                d.readsPerConnectionMax(), d.connectTimeoutMs(), d.authorizeTimeoutMs(), d.grantSafetyMarginMs(),
                d.grantsTrackedMax(), d.sharedArenasMappedMax(),
                64 << 10, d.sourceEventLoopThreads(), d.requesterEventLoopThreads(), d.dataConnectionsMax(),
                d.dataConnectionsPerAddressMax(), d.dataHeaderTimeoutMs(), d.dataIdleTimeoutMs(),
                d.dataReadsQueuedPerConnectionMax(), d.dataChannelAuthorize());
    }

    public TransferFixture(Options o) throws IOException {
        this.io = o.io();
        this.config = o.config();
        this.group = io.newGroup(2);
        this.requesterGroup = io.newGroup(2);
        this.membership = new TestMembership(cluster, sourceIncarnation, requesterIncarnation);
        this.dir = Files.createTempDirectory("orbitkv-transfer-test");
        this.payloads = new TestPayloadSource(TestPayloadSource.sharedMemoryDir(dir), BLOCK_BYTES_CEILING + (32L << 20), dir, o.sourcePinsMax());
        this.proxy = o.proxy() ? new FaultProxy(group, io) : null;
        this.copier = o.faultCopier() ? new FaultCopier(payloads.arenaFile()) : null;
        this.source = Source.startForTest(payloads, cluster, sourceIncarnation, membership, config,
                new InetSocketAddress("127.0.0.1", 0), proxy != null ? proxy.endpoint() : null, group,
                io.serverChannel(), o.sourceClock(), o.sourceBootId(), o.sourceTls(), o.egressAccount());
        if (proxy != null) {
            proxy.target(source.boundDataAddress());
        }
        NettyServerBuilder server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .channelType(io.serverChannel()).bossEventLoopGroup(group).workerEventLoopGroup(group)
                .addService(source.authorizationService());
        if (o.inlineAuthorization()) {
            server.directExecutor(); // this server carries only the authorization service
        }
        this.grpc = server.build().start();
        int port = ((InetSocketAddress) grpc.getListenSockets().getFirst()).getPort();
        this.channel = NettyChannelBuilder.forAddress("127.0.0.1", port).channelType(io.socketChannel())
                .eventLoopGroup(requesterGroup).usePlaintext().build();
        this.sourceMember = new Member(sourceIncarnation, new Endpoint("127.0.0.1", port),
                new Endpoint("127.0.0.1", 1), "orbitkv/inventory-stream/v4");
        this.engine = Engine.createForTest(config, cluster, () -> requesterIncarnation, e -> channel, requesterGroup,
                io.socketChannel(), System::nanoTime, o.engineBootId(), copier != null ? copier : ChunkCopier.PLAIN,
                o.engineTls());
    }

    public static StateKey key(int i) {
        return new StateKey(NS, HexFormat.of().parseHex(String.format("%016x", 0x5eed0000L + i)));
    }

    /**
     * A known payload (PERF-4 header: little-endian u64 generation, u64 block index), then seeded random bytes.
     */
    public static byte[] payload(int size, long generation, long index) {
        byte[] b = new byte[size];
        new SplittableRandom(generation * 1_000_003 + index).nextBytes(b);
        if (size >= 16) {
            ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(generation).putLong(index);
        }
        return b;
    }

    public GrantRequest request(Intent intent, List<BlockRef> blocks) {
        return new GrantRequest(sourceMember, intent, blocks, Duration.ofSeconds(5));
    }

    public AuthorizeOutcome authorize(Intent intent, List<BlockRef> blocks) {
        return engine.authorize(request(intent, blocks)).toCompletableFuture().orTimeout(10, TimeUnit.SECONDS).join();
    }

    /** Authorizes and expects a grant. */
    public Grant grant(List<BlockRef> blocks) {
        AuthorizeOutcome o = authorize(Intent.FOREGROUND, blocks);
        if (!(o instanceof AuthorizeOutcome.Granted g)) {
            throw new AssertionError("expected a grant, got " + o);
        }
        return g.grant();
    }

    public static ReadResult await(ReadHandle h) {
        return h.outcome().toCompletableFuture().orTimeout(20, TimeUnit.SECONDS).join();
    }

    public static ReleaseOutcome await(java.util.concurrent.CompletionStage<ReleaseOutcome> s) {
        return s.toCompletableFuture().orTimeout(20, TimeUnit.SECONDS).join();
    }

    /** Native destination memory the test owns, filled with 0xEE so that a zero-fill is visible. */
    public static MemorySegment destination(Arena arena, long bytes) {
        MemorySegment s = arena.allocate(Math.max(1, bytes), 64);
        s.fill((byte) 0xEE);
        return s;
    }

    @Override
    public void close() throws IOException {
        engine.close();
        channel.shutdownNow();
        grpc.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
            grpc.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        source.close();
        if (proxy != null) {
            proxy.close();
        }
        requesterGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        payloads.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }
}
