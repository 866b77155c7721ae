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
    private final int inFlightMax;
    private volatile boolean accepting = true;

    private HttpApiServer(EventLoopGroup group, Channel listener, ChannelGroup connections, ExecutorService executor,
                          Semaphore inFlight, int inFlightMax) {
        this.group = group;
        this.listener = listener;
        this.connections = connections;
        this.executor = executor;
        this.inFlight = inFlight;
        this.inFlightMax = inFlightMax;
    }

    /** Starts a standalone Manager's API over {@code tiers} (the distributed metadata arrives with the wiring). */
    public static HttpApiServer startStandalone(ManagerConfig config, LocalTiers tiers, Incarnation incarnation,
                                                NativeTransport transport) throws InterruptedException {
        DistributedMetadata metadata = new StandaloneMetadata(config.cluster(), incarnation, config.scope());
        HttpLimits limits = new HttpLimits(config.http().saveBodyBytesMax(), config.http().jsonBodyBytesMax(),
                config.tiers().blockBytesMax(), config.http().requestsInFlightMax(), config.http().awaitTimeoutMsMax(),
                config.http().awaitTimeoutMsMax());
        return start(config.httpListen(), transport, tiers, metadata, limits);
    }

    static HttpApiServer start(ListenAddress address, NativeTransport transport, LocalTiers tiers,
                               DistributedMetadata metadata, HttpLimits limits) throws InterruptedException {
        ApiMetrics metrics = new ApiMetrics(tiers);
        CacheApi api = new CacheApi(tiers, metadata, metrics, limits.saveBodyBytesMax(), limits.syncWaitMs());
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
                    .childHandler(new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            connections.add(ch);
                            ch.pipeline().addLast(new ReadTimeoutHandler(READ_IDLE_SECONDS))
                                    .addLast(new HttpServerCodec(HTTP_INITIAL_LINE_BYTES_MAX, HTTP_HEADER_BYTES_MAX, 64 * 1024))
                                    .addLast(new FlowControlHandler())
                                    .addLast(new HttpApiHandler(api, metrics, limits, admission, executor));
                        }
                    })
                    .bind(new InetSocketAddress(address.host(), address.port())).sync().channel();
            self[0] = new HttpApiServer(group, listener, connections, executor, inFlight, limits.requestsInFlightMax());
            return self[0];
        } catch (InterruptedException | RuntimeException e) {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            executor.shutdownNow();
            throw e;
        }
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

    /** Waits until every admitted request has been answered; false on timeout. */
    public boolean drain(long timeoutMs) throws InterruptedException {
        if (inFlight.tryAcquire(inFlightMax, timeoutMs, TimeUnit.MILLISECONDS)) {
            inFlight.release(inFlightMax);
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
