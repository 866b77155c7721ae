package orbitkv.server.http;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.flow.FlowControlHandler;
import io.netty.handler.timeout.ReadTimeoutHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import orbitkv.membership.Incarnation;
import orbitkv.server.config.ListenAddress;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.net.NativeTransport;
import orbitkv.server.tier.LocalTiers;

/**
 * The HTTP API listener on the Netty native transport (DESIGN §7). Requests execute on virtual threads,
 * at most {@code requestsInFlightMax} at once. Shutdown: {@link #stopAdmission()} closes the listener and
 * answers new requests on open connections with 503 {@code SHUTTING_DOWN}; {@link #drain} waits for the
 * admitted requests; {@link #close()} closes connections and the event loops.
 */
public final class HttpApiServer implements AutoCloseable {
    private static final int HTTP_HEADER_BYTES_MAX = 16 * 1024;
    private static final int HTTP_INITIAL_LINE_BYTES_MAX = 8 * 1024;
    /** A connection that sends nothing for this long is closed (idle keep-alive, or a stalled body holding a permit). */
    static final int READ_IDLE_SECONDS = 120;

    private final EventLoopGroup group;
    private final Channel listener;
    private final ChannelGroup connections;
    private final ExecutorService executor;
    private final Semaphore inFlight;
    private final HttpLimits limits;
    private final LocalTiers tiers;
    /** Set once by {@link #serve}; connections are accepted only afterwards. */
    private volatile HttpApiHandler.Wiring wiring;
    private volatile boolean accepting = true;

    private HttpApiServer(EventLoopGroup group, Channel listener, ChannelGroup connections, ExecutorService executor,
                          Semaphore inFlight, HttpLimits limits, LocalTiers tiers) {
        this.group = group;
        this.listener = listener;
        this.connections = connections;
        this.executor = executor;
        this.inFlight = inFlight;
        this.limits = limits;
        this.tiers = tiers;
    }

    /** The HTTP limits of a validated configuration. */
    static HttpLimits limits(ManagerConfig config) {
        return new HttpLimits(config.http().saveBodyBytesMax(), config.http().jsonBodyBytesMax(),
                config.tiers().blockBytesMax(), config.http().requestsInFlightMax(), config.http().awaitTimeoutMsMax(),
                config.http().awaitTimeoutMsMax());
    }

    /** Starts a standalone Manager's API over {@code tiers}: bind and serve at once (INV-10, API-3). */
    public static HttpApiServer startStandalone(ManagerConfig config, LocalTiers tiers, Incarnation incarnation,
                                                NativeTransport transport) throws InterruptedException {
        HttpApiServer server = bind(config.httpListen(), transport, tiers, limits(config));
        server.serve(new StandaloneMetadata(config.cluster(), incarnation, config.scope()));
        return server;
    }

    /**
     * Binds the listener of a distributed Manager without accepting connections yet: the bound address is
     * advertised in the member record at registration, and the API serves only once the registered
     * {@link ClusterMetadata} exists ({@link #serve(ClusterMetadata)}). Until then connections wait in the
     * kernel's accept backlog.
     */
    public static HttpApiServer bind(ManagerConfig config, LocalTiers tiers, NativeTransport transport)
            throws InterruptedException {
        return bind(config.httpListen(), transport, tiers, limits(config));
    }

    /** Starts accepting connections with the distributed metadata of a registered incarnation. */
    public void serve(ClusterMetadata metadata) {
        serve((DistributedMetadata) metadata);
    }

    static HttpApiServer start(ListenAddress address, NativeTransport transport, LocalTiers tiers,
                               DistributedMetadata metadata, HttpLimits limits) throws InterruptedException {
        HttpApiServer server = bind(address, transport, tiers, limits);
        server.serve(metadata);
        return server;
    }

    static HttpApiServer bind(ListenAddress address, NativeTransport transport, LocalTiers tiers, HttpLimits limits)
            throws InterruptedException {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, transport.handler());
        ChannelGroup connections = new DefaultChannelGroup("orbitkv-http", GlobalEventExecutor.INSTANCE);
        ExecutorService executor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("orbitkv-http-", 0).factory());
        Semaphore inFlight = new Semaphore(limits.requestsInFlightMax());
        HttpApiServer[] self = new HttpApiServer[1];
        HttpApiHandler.Admission admission = new HttpApiHandler.Admission() {
            @Override
            public boolean tryAcquire() {
                return inFlight.tryAcquire();
            }

            @Override
            public void release() {
                inFlight.release();
            }

            @Override
            public boolean accepting() {
                return self[0] == null || self[0].accepting;
            }
        };
        try {
            Channel listener = new ServerBootstrap().group(group).channel(transport.serverChannel())
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .option(ChannelOption.AUTO_READ, false) // no accept before serve()
                    .childHandler(new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            HttpApiHandler.Wiring w = self[0].wiring;
                            connections.add(ch);
                            ch.pipeline().addLast(new ReadTimeoutHandler(READ_IDLE_SECONDS))
                                    .addLast(new HttpServerCodec(HTTP_INITIAL_LINE_BYTES_MAX, HTTP_HEADER_BYTES_MAX, 64 * 1024))
                                    .addLast(new FlowControlHandler())
                                    .addLast(new HttpApiHandler(w.api(), w.metrics(), limits, admission, executor));
                        }
                    })
                    .bind(new InetSocketAddress(address.host(), address.port())).sync().channel();
            self[0] = new HttpApiServer(group, listener, connections, executor, inFlight, limits, tiers);
            return self[0];
        } catch (InterruptedException | RuntimeException e) {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            executor.shutdownNow();
            throw e;
        }
    }

    private void serve(DistributedMetadata metadata) {
        if (wiring != null) {
            throw new IllegalStateException("the HTTP API is already serving");
        }
        ApiMetrics metrics = new ApiMetrics(tiers);
        metadata.registerMetrics(metrics.registry());
        wiring = new HttpApiHandler.Wiring(new CacheApi(tiers, metadata, metrics, limits.saveBodyBytesMax(),
                limits.syncWaitMs()), metrics);
        listener.config().setAutoRead(true);
    }

    /** The bound address (the chosen port when the configuration said 0). */
    public InetSocketAddress boundAddress() {
        return (InetSocketAddress) listener.localAddress();
    }

    /** Stops accepting connections and admitting requests (new ones get 503 SHUTTING_DOWN). */
    public void stopAdmission() {
        accepting = false;
        listener.close().syncUninterruptibly();
    }

    /** True once {@link #stopAdmission()} or {@link #close()} ran. */
    public boolean stopped() {
        return !accepting;
    }

    /** Waits until every admitted request has been answered; false on timeout. */
    public boolean drain(long timeoutMs) throws InterruptedException {
        if (inFlight.tryAcquire(limits.requestsInFlightMax(), timeoutMs, TimeUnit.MILLISECONDS)) {
            inFlight.release(limits.requestsInFlightMax());
            return true;
        }
        return false;
    }

    @Override
    public void close() {
        accepting = false;
        listener.close().syncUninterruptibly();
        connections.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        executor.shutdownNow();
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
