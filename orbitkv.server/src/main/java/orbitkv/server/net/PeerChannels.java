package orbitkv.server.net;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import orbitkv.membership.Endpoint;
import orbitkv.server.config.PeerTls;

/**
 * Client channels to other Managers' peer listeners on the Netty native transport, sharing one event loop
 * group. The requester end of the InventorySession opens one channel per admitted member it subscribes to
 * (at most {@code --peer-sessions-max}) and closes it when the member leaves; this class owns only the
 * shared event loops.
 */
public final class PeerChannels implements AutoCloseable {
    private final NativeTransport transport;
    private final EventLoopGroup group;
    private final Optional<PeerTls> tls;
    private final int inboundMessageBytesMax;

    /**
     * @param tls mutual TLS toward every peer (the same certificate and CA as the listener), or empty for plaintext
     * @param inboundMessageBytesMax gRPC's bound on one inbound message, derived from the frame bounds
     */
    public PeerChannels(NativeTransport transport, Optional<PeerTls> tls, int inboundMessageBytesMax) {
        this.transport = transport;
        this.tls = tls;
        this.inboundMessageBytesMax = inboundMessageBytesMax;
        this.group = new MultiThreadIoEventLoopGroup(2, transport.handler());
    }

    /**
     * A channel to {@code peer}: TLS presenting this Manager's certificate and verifying the peer's against the
     * CA and the advertised host, or plaintext (trusted cluster, OPS-5). The caller owns and shuts it down.
     */
    public ManagedChannel open(Endpoint peer) {
        NettyChannelBuilder builder = NettyChannelBuilder.forAddress(peer.host(), peer.port())
                .channelType(transport.clientChannel())
                .eventLoopGroup(group)
                .maxInboundMessageSize(inboundMessageBytesMax);
        if (tls.isPresent()) {
            builder.sslContext(tls.get().clientContext()).useTransportSecurity();
        } else {
            builder.usePlaintext();
        }
        return builder.build();
    }

    @Override
    public void close() throws InterruptedException {
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
}
