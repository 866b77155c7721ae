package orbitkv.transfer.frame;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.TimeUnit;
import orbitkv.transfer.TransferTransport;

/**
 * The Netty side of {@link TransferTransport}: the event loop groups the transfer module owns (one for a source's
 * data listener and expiry sweep, one for a requester's data connections), and the channel classes that go with
 * them.
 */
public final class EventLoops {
    private EventLoops() {}

    /** Null when {@code t}'s native library loaded, else why not. */
    public static Throwable unavailabilityCause(TransferTransport t) {
        return switch (t) {
            case IO_URING -> IoUring.unavailabilityCause();
            case EPOLL -> Epoll.unavailabilityCause();
        };
    }

    /**
     * A group of {@code threads} daemon event loops named {@code name-N}.
     *
     * @throws IllegalStateException if {@code t} is not available here
     */
    public static EventLoopGroup newGroup(TransferTransport t, int threads, String name) {
        Throwable cause = unavailabilityCause(t);
        if (cause != null) {
            throw new IllegalStateException(t + " is not available on this host", cause);
        }
        IoHandlerFactory handler = t == TransferTransport.IO_URING ? IoUringIoHandler.newFactory()
                : EpollIoHandler.newFactory();
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true), handler);
    }

    public static Class<? extends ServerChannel> serverChannel(TransferTransport t) {
        return t == TransferTransport.IO_URING ? IoUringServerSocketChannel.class : EpollServerSocketChannel.class;
    }

    public static Class<? extends Channel> socketChannel(TransferTransport t) {
        return t == TransferTransport.IO_URING ? IoUringSocketChannel.class : EpollSocketChannel.class;
    }

    /** Stops {@code group} after its queued tasks ran (no quiet period), waiting at most 5 s. */
    public static void shutdown(EventLoopGroup group) {
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
