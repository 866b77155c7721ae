package orbitkv.transfer;

import orbitkv.transfer.frame.EventLoops;

/**
 * The Netty native transport the transfer data plane runs on: io_uring when the kernel allows it, else epoll
 * (the same choice as the Manager's HTTP and peer listeners), never a silent fallback to NIO.
 *
 * <p>The caller names the transport; the transfer module builds its own event loops from it
 * ({@link TransferConfig#sourceEventLoopThreads()}, {@link TransferConfig#requesterEventLoopThreads()}) and shuts
 * them down on close. Bulk payload therefore never runs on the gRPC or HTTP event loops, and no Netty type appears
 * in this module's exported contract.
 */
public enum TransferTransport {
    /** Linux io_uring ({@code io.netty.channel.uring}). */
    IO_URING,
    /** Linux epoll ({@code io.netty.channel.epoll}). */
    EPOLL;

    /** Whether this transport's native library loads on this host. */
    public boolean isAvailable() {
        return EventLoops.unavailabilityCause(this) == null;
    }

    /**
     * io_uring if available, else epoll.
     *
     * @throws IllegalStateException naming both causes when neither is available
     */
    public static TransferTransport detect() {
        if (IO_URING.isAvailable()) {
            return IO_URING;
        }
        if (EPOLL.isAvailable()) {
            return EPOLL;
        }
        throw new IllegalStateException("no Netty native transport for transfer: io_uring: "
                + EventLoops.unavailabilityCause(IO_URING) + "; epoll: " + EventLoops.unavailabilityCause(EPOLL));
    }
}
