package orbitkv.server.net;

import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerCallExecutorSupplier;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.util.MutableHandlerRegistry;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import orbitkv.server.config.ListenAddress;
import orbitkv.server.config.PeerTls;

/**
 * The Manager's peer listener ({@code --peer-listen}): one gRPC server on the Netty native transport that
 * carries the InventorySession v4 service (SES-1: its own proto service on the existing peer listener) and,
 * later, the transfer services. It owns no payload.
 *
 * <p>With {@code --peer-tls-*} it speaks TLS and requires a client certificate signed by the configured CA
 * (mutual TLS, {@link PeerTls}); without, plaintext (the trusted-cluster posture, OPS-5). Under TLS every call's
 * certificate must name a member ({@link PeerIdentityInterceptor}), and the handlers see that node id. Its inbound message
 * bound is derived from the session's frame bounds ({@code ManagerConfig.peerInboundMessageBytesMax()}), not
 * gRPC's 4 MiB default: a legal frame is never refused by the transport, and anything far beyond is refused
 * from its length prefix before it is buffered.
 *
 * <p>The listener is bound before registration, because its address goes into the member record; services
 * are added once the registered incarnation exists ({@link #addService}). Until a service is added its
 * methods answer UNIMPLEMENTED; nobody learns the address before the member record is written.
 *
 * <p>Where handlers run: by default on grpc-java's executor. A service whose handlers never block (no I/O, no
 * wait, only short lock holds) is added with {@link #addInlineService}; its calls run on the event loop that
 * received them, which saves two thread hand-offs per unary call (issue 24 item 4: transfer Authorize/Release,
 * {@code AuthorizeBenchmark}'s {@code calls} parameter measures it).
 */
public final class PeerListener implements AutoCloseable {
    /** Bound on a graceful stop before in-flight calls are cancelled. */
    static final long STOP_GRACE_MS = 2_000;

    private final Server server;
    private final MutableHandlerRegistry services;
    private final EventLoopGroup group;
    /** Names of services whose handlers run on the event loop; bounded by the services added (two today). */
    private final Set<String> inlineServices;

    private PeerListener(Server server, MutableHandlerRegistry services, EventLoopGroup group, Set<String> inlineServices) {
        this.server = server;
        this.services = services;
        this.group = group;
        this.inlineServices = inlineServices;
    }

    /**
     * @param tls mutual TLS, or empty for plaintext
     * @param inboundMessageBytesMax gRPC's bound on one inbound message
     */
    public static PeerListener start(ListenAddress address, NativeTransport transport, Optional<PeerTls> tls,
                                     int inboundMessageBytesMax) throws IOException {
        MutableHandlerRegistry services = new MutableHandlerRegistry();
        Set<String> inline = ConcurrentHashMap.newKeySet();
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, transport.handler());
        try {
            NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress(address.host(), address.port()))
                    .channelType(transport.serverChannel())
                    .bossEventLoopGroup(group)
                    .workerEventLoopGroup(group)
                    .maxInboundMessageSize(inboundMessageBytesMax)
                    .fallbackHandlerRegistry(services)
                    .callExecutor(inlineCalls(inline));
            if (tls.isPresent()) {
                // issue 33: each call carries the node id its certificate names; Open/Authorize/Release compare it
                builder.sslContext(tls.get().serverContext()).intercept(new PeerIdentityInterceptor());
            }
            Server server = builder.build().start();
            return new PeerListener(server, services, group, inline);
        } catch (IOException | RuntimeException e) {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            throw e;
        }
    }

    /**
     * Adds a service to the listener. The Manager's wiring calls this in exactly one place
     * (DistributedManager, "peer services").
     */
    public void addService(BindableService service) {
        services.addService(service);
    }

    /**
     * Adds a service whose handlers never block (no I/O, no waiting, only short lock holds): its calls run on the
     * event loop that received them instead of being handed to the executor and back. A blocking handler added here
     * would stall every stream on that event loop, so only the transfer authorization service is (DistributedManager,
     * "peer services"; its handlers' contract is in {@code TransferSource}).
     */
    public void addInlineService(BindableService service) {
        io.grpc.ServerServiceDefinition definition = service.bindService();
        inlineServices.add(definition.getServiceDescriptor().getName());
        services.addService(definition);
    }

    /** The executor choice per call: direct for the inline services, null (grpc-java's executor) for the rest. */
    private static ServerCallExecutorSupplier inlineCalls(Set<String> inline) {
        return new ServerCallExecutorSupplier() {
            @Override
            public <ReqT, RespT> java.util.concurrent.Executor getExecutor(io.grpc.ServerCall<ReqT, RespT> call,
                                                                           io.grpc.Metadata metadata) {
                return inline.contains(call.getMethodDescriptor().getServiceName()) ? MoreExecutors.directExecutor() : null;
            }
        };
    }

    /** The bound address (the chosen port when the configuration said 0). */
    public InetSocketAddress boundAddress() {
        return (InetSocketAddress) server.getListenSockets().getFirst();
    }

    /** Stops accepting calls, lets running ones finish within {@link #STOP_GRACE_MS}, then cancels them. */
    @Override
    public void close() throws InterruptedException {
        server.shutdown();
        if (!server.awaitTermination(STOP_GRACE_MS, TimeUnit.MILLISECONDS)) {
            server.shutdownNow();
            server.awaitTermination(STOP_GRACE_MS, TimeUnit.MILLISECONDS);
        }
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
}
