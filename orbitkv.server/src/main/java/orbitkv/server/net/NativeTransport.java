package orbitkv.server.net;

import io.netty.channel.Channel;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;

/**
 * The Netty native transport of this host: epoll, or io_uring when asked ({@link #IO_URING_PROPERTY}) or when epoll
 * is missing; neither is a failure, never a silent fallback to NIO. Shared by the HTTP API, the peer listener and selftest.
 *
 * @param name "io_uring" or "epoll"
 * @param handler the I/O handler factory for event loop groups
 * @param serverChannel the server socket channel class
 * @param clientChannel the client socket channel class
 */
public record NativeTransport(String name, IoHandlerFactory handler,
                              Class<? extends ServerChannel> serverChannel, Class<? extends Channel> clientChannel) {
    /**
     * JVM system property ({@code -Dorbitkv.transport.io_uring=true}) that selects io_uring where the kernel allows it.
     * Off by default: on Netty 4.2.18's io_uring transport a Manager kept 6 socket descriptors of every peer killed
     * with SIGKILL, closed connections whose descriptors were never released (PeerKillDescriptorGateTest; the soak's
     * descriptor staircase); on epoll it keeps none. Opt in only to compare the transports.
     */
    public static final String IO_URING_PROPERTY = "orbitkv.transport.io_uring";

    /** epoll, or io_uring when {@link #IO_URING_PROPERTY} asks for it and the kernel allows it. */
    public static NativeTransport detect() {
        if (Boolean.getBoolean(IO_URING_PROPERTY) && IoUring.isAvailable()) {
            return new NativeTransport("io_uring", IoUringIoHandler.newFactory(),
                    IoUringServerSocketChannel.class, IoUringSocketChannel.class);
        }
        if (Epoll.isAvailable()) {
            return new NativeTransport("epoll", EpollIoHandler.newFactory(),
                    EpollServerSocketChannel.class, EpollSocketChannel.class);
        }
        if (IoUring.isAvailable()) {
            return new NativeTransport("io_uring", IoUringIoHandler.newFactory(),
                    IoUringServerSocketChannel.class, IoUringSocketChannel.class);
        }
        throw new IllegalStateException("no Netty native transport: io_uring: "
                + describe(IoUring.unavailabilityCause()) + "; epoll: " + describe(Epoll.unavailabilityCause()));
    }

    /** The Unix-domain server socket channel class of this transport (the HTTP API's --http-unix-socket). */
    public Class<? extends ServerChannel> serverDomainSocketChannel() {
        return "io_uring".equals(name) ? io.netty.channel.uring.IoUringServerDomainSocketChannel.class
                : io.netty.channel.epoll.EpollServerDomainSocketChannel.class;
    }

    /** The cause chain with suppressed attempts: Netty records each library-loading try there. */
    private static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null && sb.length() < 4096; c = c.getCause()) {
            sb.append(c).append(' ');
            for (Throwable s : c.getSuppressed()) {
                sb.append("[tried: ").append(s).append("] ");
            }
        }
        return sb.toString().trim();
    }
}
