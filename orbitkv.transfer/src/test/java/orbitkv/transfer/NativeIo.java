package orbitkv.transfer;

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

/**
 * The two Netty native transports the Manager selects between (orbitkv.server.net.NativeTransport: io_uring,
 * else epoll), so the tests run the data channel on each. A missing transport fails the test (no skip).
 */
public enum NativeIo {
    IO_URING,
    EPOLL;

    public IoHandlerFactory handler() {
        require();
        return this == IO_URING ? IoUringIoHandler.newFactory() : EpollIoHandler.newFactory();
    }

    public Class<? extends ServerChannel> serverChannel() {
        return this == IO_URING ? IoUringServerSocketChannel.class : EpollServerSocketChannel.class;
    }

    public Class<? extends Channel> socketChannel() {
        return this == IO_URING ? IoUringSocketChannel.class : EpollSocketChannel.class;
    }

    public EventLoopGroup newGroup(int threads) {
        return new MultiThreadIoEventLoopGroup(threads, handler());
    }

    /** The Manager's choice on this host. */
    public static NativeIo detect() {
        return IoUring.isAvailable() ? IO_URING : EPOLL;
    }

    private void require() {
        Throwable cause = this == IO_URING ? IoUring.unavailabilityCause() : Epoll.unavailabilityCause();
        if (cause != null) {
            throw new IllegalStateException(this + " is not available on this host", cause);
        }
    }
}
