package orbitkv.server.http;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import orbitkv.server.net.UnixSocket;
import orbitkv.server.config.ListenAddress;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.net.NativeTransport;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.RouteSelection;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.incarnation.DistributedMetadata;
import orbitkv.server.metrics.ManagerMetrics;
import orbitkv.server.metrics.RouteMetricFamilies;
import orbitkv.server.metrics.TierMetricFamilies;
import orbitkv.server.runtime.ApiListener;

/**
 * The HTTP API listener on the Netty native transport (DESIGN §7). Connections are read manually (one request
 * at a time per connection, pipelined ones answered in order; {@link HttpApiHandler}); requests execute on
 * virtual threads, at most {@code requestsInFlightMax} at once plus {@code probesInFlightMax} /health and
 * /metrics probes, with at most {@code bodyBytesInFlightMax} body bytes admitted across connections
 * ({@link HttpAdmission}). Shutdown (issue 33: every request in flight or arriving during the drain is completed
 * or answered 503 {@code SHUTTING_DOWN} with {@code Connection: close}, never reset or left without an answer):
 * {@link #stopAdmission()} stops admitting, so new requests, on open or new connections (the listener keeps
 * accepting during the drain), are answered 503; {@link #drain} waits for the admitted requests within
 * {@code --shutdown-drain-ms}, then answers those still receiving their body 503; {@link #close()} closes the
 * listener, lets executing requests answer (interrupted ones 503), answers requests still arriving 503, closes
 * idle connections, waits for lingering ones within the linger bound, then closes the rest and the event loops.
 */
public final class HttpApiServer implements ApiListener {
    private static final int HTTP_HEADER_BYTES_MAX = 16 * 1024;
    private static final int HTTP_INITIAL_LINE_BYTES_MAX = 8 * 1024;
    /** Largest body chunk the decoder hands over at once (body bytes are bounded by the admission anyway). */
    private static final int HTTP_CHUNK_BYTES_MAX = 64 * 1024;
    /** Bytes of one socket read (the adaptive buffer's ceiling): what one read can add to the decoded queue. */
    private static final int READ_BYTES_MAX = 64 * 1024;
    /** The shortest request the decoder accepts ({@code "GET / HTTP/1.1\n\n"}). */
    private static final int REQUEST_BYTES_MIN = 16;
    /** Bound of each shutdown step after the drain: answers written, executing requests ended. */
    private static final long SHUTDOWN_STEP_MS = 5000;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(HttpApiServer.class);

    private final EventLoopGroup group;
    private final Channel listener;
    /** The Unix-domain socket listener, or null (issue 33). */
    private final Channel unixListener;
    private final UnixSocket unixSocket;
    private final ChannelGroup connections;
    private final ExecutorService executor;
    private final HttpAdmission admission;
    private final HttpLimits limits;
    private final LocalTiers tiers;
    /** Set once by {@link #serve}; connections are accepted only afterwards. */
    private volatile HttpApiHandler.Wiring wiring;
    /**
     * The recovery planner of this Manager (issue 14): restores and queries plan with it, its cost model learns
     * from executed restores. Created by the Manager core from the {@code --route-*} options and closed by it; a
     * listener started on its own (tests) creates the planner's defaults and closes them ({@link #ownsRoutes}).
     */
    private volatile RouteSelection routes;
    /** The Manager's one metrics registry: the HTTP, restore and tier families join it when serving. */
    private volatile PrometheusRegistry registry;
    private volatile boolean ownsRoutes;
    /** Retention and declared prefetch (issue 40): the options from the configuration, the work created when serving. */
    private volatile orbitkv.server.config.SpeculationOptions speculationOptions = orbitkv.server.config.SpeculationOptions.DEFAULTS;
    private volatile orbitkv.server.restore.Speculation speculation;

    private HttpApiServer(EventLoopGroup group, Channel listener, Channel unixListener, UnixSocket unixSocket,
                          ChannelGroup connections, ExecutorService executor,
                          HttpAdmission admission, HttpLimits limits, LocalTiers tiers) {
        this.group = group;
        this.listener = listener;
        this.unixListener = unixListener;
        this.unixSocket = unixSocket;
        this.connections = connections;
        this.executor = executor;
        this.admission = admission;
        this.limits = limits;
        this.tiers = tiers;
    }

    /**
     * Binds the listener without accepting connections yet: a distributed Manager advertises the bound address
     * in its member record at registration, and serves only once its metadata exists ({@link #serve}). Until then
     * connections wait in the kernel's accept backlog. The {@link ApiListener.Binder} of the Manager core.
     */
    public static HttpApiServer bind(ManagerConfig config, LocalTiers tiers, NativeTransport transport,
                                     RouteSelection routes, PrometheusRegistry registry) throws InterruptedException {
        HttpApiServer server = bind(config.httpListen(), transport, tiers, HttpLimits.of(config),
                config.http().tls().map(orbitkv.server.config.HttpTls::serverContext),
                config.http().unixSocket().map(p -> new UnixSocket(p, config.http().unixSocketMode())));
        server.routes = java.util.Objects.requireNonNull(routes, "routes");
        server.registry = java.util.Objects.requireNonNull(registry, "registry");
        server.speculationOptions = config.speculation();
        return server;
    }

    static HttpApiServer start(ListenAddress address, NativeTransport transport, LocalTiers tiers,
                               DistributedMetadata metadata, HttpLimits limits) throws InterruptedException {
        HttpApiServer server = bind(address, transport, tiers, limits);
        server.serve(metadata);
        return server;
    }

    /** As {@link #start(ListenAddress, NativeTransport, LocalTiers, DistributedMetadata, HttpLimits)} over TLS. */
    static HttpApiServer start(ListenAddress address, NativeTransport transport, LocalTiers tiers,
                               DistributedMetadata metadata, HttpLimits limits, SslContext tls) throws InterruptedException {
        HttpApiServer server = bind(address, transport, tiers, limits, Optional.of(tls), Optional.empty());
        server.serve(metadata);
        return server;
    }

    static HttpApiServer bind(ListenAddress address, NativeTransport transport, LocalTiers tiers, HttpLimits limits)
            throws InterruptedException {
        return bind(address, transport, tiers, limits, Optional.empty(), Optional.empty());
    }

    /** As {@link #start(ListenAddress, NativeTransport, LocalTiers, DistributedMetadata, HttpLimits)} plus a Unix socket. */
    static HttpApiServer start(ListenAddress address, NativeTransport transport, LocalTiers tiers,
                               DistributedMetadata metadata, HttpLimits limits, UnixSocket unix) throws InterruptedException {
        HttpApiServer server = bind(address, transport, tiers, limits, Optional.empty(), Optional.of(unix));
        server.serve(metadata);
        return server;
    }

    /**
     * Binds the listener; with {@code tls}, every TCP connection starts with Netty's {@code SslHandler} in front of
     * the same handler and limits; with {@code unix}, a Unix-domain socket listener serves the same handler and
     * limits, in plaintext (issue 33).
     */
    static HttpApiServer bind(ListenAddress address, NativeTransport transport, LocalTiers tiers, HttpLimits limits,
                              Optional<SslContext> tls, Optional<UnixSocket> unix) throws InterruptedException {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, transport.handler());
        ChannelGroup connections = new DefaultChannelGroup("orbitkv-http", GlobalEventExecutor.INSTANCE);
        ExecutorService executor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("orbitkv-http-", 0).factory());
        HttpAdmission admission = new HttpAdmission(limits);
        HttpApiServer[] self = new HttpApiServer[1];
        Channel listener = null;
        try {
            listener = bootstrap(group, transport.serverChannel(), self, connections, limits, admission, executor, tls)
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .bind(new InetSocketAddress(address.host(), address.port())).sync().channel();
            Channel unixListener = unix.isEmpty() ? null : unix.get().bind(bootstrap(group,
                    transport.serverDomainSocketChannel(), self, connections, limits, admission, executor, Optional.empty()));
            self[0] = new HttpApiServer(group, listener, unixListener, unix.orElse(null), connections, executor, admission,
                    limits, tiers);
            return self[0];
        } catch (InterruptedException | RuntimeException e) {
            if (listener != null) {
                listener.close().syncUninterruptibly();
            }
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            executor.shutdownNow();
            throw e;
        }
    }

    /** A listener's bootstrap: the same per-connection pipeline, handler and limits on every listener. */
    private static ServerBootstrap bootstrap(EventLoopGroup group, Class<? extends io.netty.channel.ServerChannel> channel,
                                             HttpApiServer[] self, ChannelGroup connections, HttpLimits limits,
                                             HttpAdmission admission, ExecutorService executor, Optional<SslContext> tls) {
        return new ServerBootstrap().group(group).channel(channel)
                .option(ChannelOption.AUTO_READ, false) // no accept before serve()
                .childOption(ChannelOption.AUTO_READ, false) // each connection reads when its handler asks
                .childOption(ChannelOption.RECVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(64, 2048, READ_BYTES_MAX))
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        HttpApiHandler.Wiring w = self[0].wiring;
                        connections.add(ch);
                        HttpApiHandler handler = new HttpApiHandler(w.api(), w.metrics(), limits, admission, executor);
                        // first in the pipeline, so it observes the socket's own outbound buffer (TLS records
                        // included): WRITER_IDLE with observeOutput fires only when no byte left it for the period
                        ch.pipeline().addLast(new IdleStateHandler(true, 0, limits.timeouts().writeStallMs(), 0,
                                TimeUnit.MILLISECONDS));
                        tls.ifPresent(t -> ch.pipeline().addLast(t.newHandler(ch.alloc())));
                        ch.pipeline().addLast(new RawBytes(handler))
                                .addLast(new HttpServerCodec(new HttpDecoderConfig()
                                        .setMaxInitialLineLength(HTTP_INITIAL_LINE_BYTES_MAX)
                                        .setMaxHeaderSize(HTTP_HEADER_BYTES_MAX).setMaxChunkSize(HTTP_CHUNK_BYTES_MAX),
                                        codecPipelineDepth(limits)))
                                .addLast(handler);
                    }
                });
    }

    /**
     * The codec's own bound on requests decoded but not answered must never fire before ours
     * ({@code --http-pipelined-requests-max}, answered 429 in order): Netty's fails the connection without an
     * answer. Ours stops reading once it is reached, so beyond it the codec can see at most what one read
     * already holds.
     */
    static int codecPipelineDepth(HttpLimits limits) {
        return limits.pipelinedRequestsMax() + READ_BYTES_MAX / REQUEST_BYTES_MIN + 2;
    }

    /** Starts accepting connections, answered with {@code metadata} (standalone, or the current incarnation's). */
    @Override
    public void serve(DistributedMetadata metadata) {
        if (wiring != null) {
            throw new IllegalStateException("the HTTP API is already serving");
        }
        if (routes == null) { // started on its own (tests): the planner's defaults and a registry of its own
            routes = RouteSelection.create(RoutePolicy.defaults());
            ManagerMetrics own = ManagerMetrics.create();
            own.add(routes::metrics, RouteMetricFamilies.FAMILIES);
            TierMetricFamilies.register(own, tiers);
            registry = own.registry();
            ownsRoutes = true;
        }
        ApiMetrics metrics = new ApiMetrics(registry, admission);
        speculation = new orbitkv.server.restore.Speculation(tiers, speculationOptions,
                io.netty.buffer.PooledByteBufAllocator.DEFAULT);
        orbitkv.server.metrics.ManagerMetrics.register(registry, speculation::figures,
                orbitkv.server.metrics.SpeculationMetricFamilies.FAMILIES); // issue 40
        wiring = new HttpApiHandler.Wiring(new CacheApi(tiers, metadata, metrics, limits.saveBodyBytesMax(),
                limits.syncWaitMs(), routes, speculation), metrics);
        listener.config().setAutoRead(true);
        if (unixListener != null) {
            unixListener.config().setAutoRead(true);
        }
    }

    /** The Unix-domain socket file, if {@code --http-unix-socket} is set. */
    public Optional<java.nio.file.Path> unixSocketPath() {
        return Optional.ofNullable(unixSocket).map(UnixSocket::path);
    }

    /** The bound address (the chosen port when the configuration said 0). */
    public InetSocketAddress boundAddress() {
        return (InetSocketAddress) listener.localAddress();
    }

    /**
     * Stops admitting requests: new ones get 503 SHUTTING_DOWN with {@code Connection: close}. The listener keeps
     * accepting until {@link #close()}, so a client connecting during the drain is answered, not refused or reset.
     */
    public void stopAdmission() {
        admission.stopAccepting();
    }

    /** True once {@link #stopAdmission()} or {@link #close()} ran. */
    public boolean stopped() {
        return !admission.accepting();
    }

    /**
     * Waits until every admitted request has been answered; false on timeout. On timeout, requests still
     * receiving their body are answered 503 SHUTTING_DOWN (their slots come back once the answer is written);
     * executing ones keep running until {@link #close()}.
     */
    public boolean drain(long timeoutMs) throws InterruptedException {
        if (admission.drain(timeoutMs)) {
            return true;
        }
        eachConnection(HttpApiHandler::shutdownCut);
        admission.drain(SHUTDOWN_STEP_MS);
        return false;
    }

    /** Runs {@code step} on the event loop of every open connection's handler. */
    private void eachConnection(java.util.function.Consumer<HttpApiHandler> step) {
        for (Channel ch : connections) {
            HttpApiHandler h = ch.pipeline().get(HttpApiHandler.class);
            if (h != null) {
                try {
                    ch.eventLoop().execute(() -> step.accept(h));
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    // the event loop is already shutting down: its connections are being closed
                }
            }
        }
    }

    @Override
    public void close() {
        admission.stopAccepting();
        listener.close().syncUninterruptibly();
        if (unixListener != null) {
            unixListener.close().syncUninterruptibly();
            unixSocket.delete();
        }
        // executing requests answer (an interrupted one 503 SHUTTING_DOWN) before their connections close
        executor.shutdownNow();
        if (speculation != null) {
            speculation.close(); // prefetch jobs stop: READs cancelled and drained, grants released
        }
        try {
            if (!executor.awaitTermination(SHUTDOWN_STEP_MS, TimeUnit.MILLISECONDS)) {
                LOG.warn("shutdown: HTTP requests still executing after {} ms; their connections are closed", SHUTDOWN_STEP_MS);
            }
            eachConnection(HttpApiHandler::shutdownClose);
            // refused connections linger (discarding unread body bytes) at most --http-linger-ms
            connections.newCloseFuture().await(limits.timeouts().lingerMs() + SHUTDOWN_STEP_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        connections.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        RouteSelection r = routes;
        if (r != null && ownsRoutes) {
            r.close();
        }
    }
}
