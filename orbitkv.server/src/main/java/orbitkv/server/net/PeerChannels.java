package orbitkv.server.net;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.util.concurrent.TimeUnit;
import orbitkv.membership.Endpoint;

/**
 * Client channels to other Managers' peer listeners on the Netty native transport, sharing one event loop
 * group. The requester end of the InventorySession opens one channel per admitted member it subscribes to
 * (at most {@code --peer-sessions-max}) and closes it when the member leaves; this class owns only the
 * shared event loops.
 */
public final class PeerChannels implements AutoCloseable {
    private final NativeTransport transport;
    private final EventLoopGroup group;

    public PeerChannels(NativeTransport transport) {
        this.transport = transport;
        this.group = new MultiThreadIoEventLoopGroup(2, transport.handler());
    }

    /** A plaintext channel to {@code peer} (trusted cluster, OPS-5); the caller owns and shuts it down. */
    public ManagedChannel open(Endpoint peer) {
        return NettyChannelBuilder.forAddress(peer.host(), peer.port())
                .channelType(transport.clientChannel())
                .eventLoopGroup(group)
                .usePlaintext()
                .build();
    }

    @Override
    public void close() throws InterruptedException {
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
}
