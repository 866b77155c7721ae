package orbitkv.transfer.requester;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.DefaultMaxMessagesRecvByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.concurrent.ScheduledFuture;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.zip.CRC32C;
import orbitkv.membership.Endpoint;
import orbitkv.transfer.ReadFailure;
import orbitkv.transfer.ReadOutcome;
import orbitkv.transfer.ReadRefusal;
import orbitkv.transfer.frame.DataFrames;
import orbitkv.transfer.frame.DataStatus;

/**
 * The TCP backend, requester side (docs/transfer.md "Data channel"): pooled data connections per source
 * endpoint (at most {@code connectionsPerSourceMax}, idle ones included), one READ at a time per connection.
 *
 * <p>Receive path: each connection's {@link RecvByteBufAllocator} hands the native transport a buffer that
 * <em>is</em> the next slice of the READ's destination (for a native destination), sized to the bytes the
 * current frame still needs, so the kernel copies the payload straight into requester-owned memory and never
 * past the frame; each slice is checksummed right after it lands, while it is in cache. Heap destinations are
 * filled from a pooled buffer instead.
 *
 * <p>Termination (INV-8): a timeout, a cancel or a broken frame closes the connection, and the READ's outcome
 * is delivered from the channel's close future, after which the transport writes nothing more into the
 * destination; only then is the destination range zero-filled and the credits returned.
 */
final class TcpReader implements AutoCloseable {
    /** Payload slice handed to one socket read: large enough for few syscalls, small enough to checksum in cache. */
    static final int PAYLOAD_SLICE_BYTES = 1 << 20;

    private final EventLoopGroup group;
    private final Class<? extends Channel> channelType;
    private final int connectionsPerSourceMax;
    private final long connectTimeoutMs;
    private final LongSupplier clock;
    private final Map<Endpoint, Pool> pools = new HashMap<>();
    private final Set<Connection> open = new HashSet<>();
    /** Payload bytes that did not land in place and were copied from a transport buffer (heap destinations). */
    private final AtomicLong copiedBytes = new AtomicLong();
    private boolean closed;

    TcpReader(EventLoopGroup group, Class<? extends Channel> channelType, int connectionsPerSourceMax,
            long connectTimeoutMs, LongSupplier clock) {
        this.group = group;
        this.channelType = channelType;
        this.connectionsPerSourceMax = connectionsPerSourceMax;
        this.connectTimeoutMs = connectTimeoutMs;
        this.clock = clock;
    }

    /** The connections of one source endpoint. */
    static final class Pool {
        final Endpoint endpoint;
        final ArrayDeque<Connection> idle = new ArrayDeque<>();
        int open;

        Pool(Endpoint endpoint) {
            this.endpoint = endpoint;
        }
    }

    /** A reserved connection: an idle one, or (idle == null) a permit to open one. */
    record Lease(Pool pool, Connection idle) {}

    /** Reserves a connection to {@code endpoint}; null when {@code connectionsPerSourceMax} are busy. */
    synchronized Lease reserve(Endpoint endpoint) {
        if (closed) {
            return null;
        }
        Pool p = pools.computeIfAbsent(endpoint, Pool::new);
        Connection c;
        while ((c = p.idle.pollFirst()) != null) {
            if (c.channel.isActive()) {
                return new Lease(p, c);
            }
        }
        if (p.open >= connectionsPerSourceMax) {
            return null;
        }
        p.open++;
        return new Lease(p, null);
    }

    /** Gives back an unused lease. */
    synchronized void unreserve(Lease l) {
        if (l.idle() != null) {
            l.pool().idle.addFirst(l.idle());
        } else {
            dropPermit(l.pool());
        }
    }

    private void dropPermit(Pool p) {
        p.open--;
        if (p.open == 0) {
            pools.remove(p.endpoint);
        }
    }

    synchronized int openConnections() {
        return open.size();
    }

    long copiedBytes() {
        return copiedBytes.get();
    }

    /** Runs {@code read} on the leased connection, or on a new one. */
    void run(Read read, Lease lease) {
        try {
            runOrThrow(read, lease);
        } catch (RuntimeException e) { // e.g. the event loop group is shutting down
            if (lease.idle() == null) {
                synchronized (this) {
                    dropPermit(lease.pool());
                }
            } else {
                lease.idle().channel.close();
            }
            read.finish(new ReadOutcome.Failed(ReadFailure.CONNECT_FAILED, "cannot run the READ: " + e));
        }
    }

    private void runOrThrow(Read read, Lease lease) {
        if (lease.idle() != null) {
            lease.idle().start(read);
            return;
        }
        Connection c = new Connection(lease.pool());
        long remainingMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(read.deadlineNanos - clock.getAsLong()));
        Bootstrap b = new Bootstrap().group(group).channel(channelType)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(connectTimeoutMs, remainingMs))
                .option(ChannelOption.RECVBUF_ALLOCATOR, c.allocator())
                .handler(c);
        b.connect(lease.pool().endpoint.host(), lease.pool().endpoint.port()).addListener((ChannelFuture f) -> {
            if (!f.isSuccess()) {
                synchronized (this) {
                    dropPermit(lease.pool());
                }
                boolean late = f.cause() instanceof ConnectTimeoutException && clock.getAsLong() - read.deadlineNanos >= 0;
                read.finish(late ? new ReadOutcome.TimedOut(clock.getAsLong() - read.admittedNanos)
                        : new ReadOutcome.Failed(ReadFailure.CONNECT_FAILED, "connect to " + lease.pool().endpoint
                                + " failed: " + f.cause()));
                return;
            }
            if (!c.attach(f.channel())) {
                f.channel().close();
                read.finish(new ReadOutcome.Refused(ReadRefusal.ENGINE_CLOSED, "the engine closed"));
                return;
            }
            c.start(read);
        });
    }

    private synchronized boolean opened(Connection c) {
        if (closed) {
            dropPermit(c.pool);
            return false;
        }
        open.add(c);
        return true;
    }

    private synchronized void backToPool(Connection c) {
        if (closed || !c.channel.isActive()) {
            c.channel.close();
            return;
        }
        c.pool.idle.addFirst(c);
    }

    private synchronized void closedConnection(Connection c) {
        if (open.remove(c)) {
            c.pool.idle.remove(c);
            dropPermit(c.pool);
        }
    }

    /** Closes every connection; their READs end as CONNECTION_LOST once their channels closed. */
    @Override
    public void close() {
        List<Connection> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(open);
        }
        for (Connection c : all) {
            c.channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }

    /** One data connection and its receive state; everything but {@link #start} runs on its event loop. */
    final class Connection extends ChannelInboundHandlerAdapter {
        final Pool pool;
        Channel channel;
        private final byte[] header = new byte[DataFrames.RESPONSE_HEADER_BYTES];
        private final CRC32C crc = new CRC32C();
        private Read op;
        private int headerFill;
        private long received;
        private ByteBuf handedOut;
        private ReadOutcome stopOutcome;
        private ScheduledFuture<?> timeout;

        Connection(Pool pool) {
            this.pool = pool;
        }

        boolean attach(Channel ch) {
            this.channel = ch;
            if (!opened(this)) {
                return false;
            }
            ch.closeFuture().addListener(f -> onClosed());
            return true;
        }

        void start(Read read) {
            channel.eventLoop().execute(() -> begin(read));
        }

        private void begin(Read read) {
            if (read.cancelRequested()) {
                backToPool(this);
                read.finish(new ReadOutcome.Cancelled());
                return;
            }
            op = read;
            headerFill = 0;
            received = 0;
            stopOutcome = null;
            crc.reset();
            long delay = read.deadlineNanos - clock.getAsLong();
            timeout = channel.eventLoop().schedule(() -> stop(read, new ReadOutcome.TimedOut(
                    clock.getAsLong() - read.admittedNanos)), Math.max(0, delay), TimeUnit.NANOSECONDS);
            read.onCancel(() -> channel.eventLoop().execute(() -> stop(read, new ReadOutcome.Cancelled())));
            ByteBuf req = channel.alloc().buffer(DataFrames.REQUEST_BYTES);
            DataFrames.writeRequest(req, read.grant.id(), read.index, read.readId);
            channel.writeAndFlush(req).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
            if (!channel.isActive()) {
                channel.close();
            }
        }

        /** Stops the READ: the connection closes and the outcome follows from {@link #onClosed}. */
        private void stop(Read read, ReadOutcome outcome) {
            if (op != read || stopOutcome != null) {
                return;
            }
            stopOutcome = outcome;
            channel.close();
        }

        private void onClosed() {
            closedConnection(this);
            Read r = op;
            if (r == null) {
                return;
            }
            op = null;
            handedOut = null;
            timeout.cancel(false);
            r.finish(stopOutcome != null ? stopOutcome
                    : new ReadOutcome.Failed(ReadFailure.CONNECTION_LOST, "the data connection to " + pool.endpoint
                            + " closed after " + (headerFill < header.length ? headerFill + " header bytes"
                                    : received + " of " + r.length + " payload bytes")));
        }

        /** The next buffer the transport reads into: never longer than the current frame still needs. */
        ByteBuf nextBuffer(ByteBufAllocator alloc) {
            Read r = op;
            if (r == null || headerFill < header.length || stopOutcome != null) {
                return alloc.directBuffer(header.length - (r == null ? 0 : Math.min(headerFill, header.length - 1)));
            }
            int n = (int) Math.min(PAYLOAD_SLICE_BYTES, Math.max(1, r.length - received));
            MemorySegment dst = r.destination.segment();
            if (dst.isNative() && received + n <= r.length) {
                handedOut = Unpooled.wrappedBuffer(dst.asSlice(received, n).asByteBuffer()).clear();
                return handedOut;
            }
            return alloc.directBuffer(n);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf buf = (ByteBuf) msg;
            try {
                consume(buf);
            } finally {
                if (buf == handedOut) {
                    handedOut = null;
                }
                buf.release();
            }
        }

        private void consume(ByteBuf buf) {
            Read r = op;
            if (r == null) {
                if (buf.isReadable()) {
                    channel.close(); // bytes nobody asked for: the framing is lost
                }
                return;
            }
            while (buf.isReadable() && op == r && stopOutcome == null) {
                if (headerFill < header.length) {
                    int n = Math.min(buf.readableBytes(), header.length - headerFill);
                    buf.readBytes(header, headerFill, n);
                    headerFill += n;
                    if (headerFill == header.length) {
                        onHeader(r);
                    }
                } else {
                    int n = (int) Math.min(buf.readableBytes(), r.length - received);
                    MemorySegment dst = r.destination.segment();
                    if (buf != handedOut) { // in place already when the transport read into the handed-out slice
                        MemorySegment.copy(MemorySegment.ofBuffer(buf.nioBuffer(buf.readerIndex(), n)), 0, dst, received, n);
                        copiedBytes.addAndGet(n);
                    }
                    crc.update(dst.asSlice(received, n).asByteBuffer());
                    received += n;
                    buf.skipBytes(n);
                    if (received == r.length) {
                        onPayload(r);
                    }
                }
            }
            if (buf.isReadable() && op == null) {
                channel.close(); // bytes after a complete response
            }
        }

        private void onHeader(Read r) {
            DataFrames.ResponseHeader h;
            try {
                h = DataFrames.readResponseHeader(header);
            } catch (DataFrames.MalformedFrame e) {
                stop(r, new ReadOutcome.Failed(ReadFailure.PROTOCOL_VIOLATION, "response header: " + e.getMessage()));
                return;
            }
            if (h.readId() != r.readId) {
                stop(r, new ReadOutcome.Failed(ReadFailure.PROTOCOL_VIOLATION,
                        "response to read " + h.readId() + ", expected " + r.readId));
                return;
            }
            switch (h.status()) {
                case OK -> {
                    if (h.length() != r.length) {
                        stop(r, new ReadOutcome.Failed(ReadFailure.PROTOCOL_VIOLATION,
                                "the source sends " + h.length() + " bytes, the grant says " + r.length));
                    } else if (r.length == 0) {
                        onPayload(r);
                    }
                }
                case GRANT_UNKNOWN -> done(r, refused(ReadRefusal.SOURCE_GRANT_ENDED, h), true);
                case BLOCK_NOT_GRANTED -> done(r, refused(ReadRefusal.BLOCK_NOT_GRANTED, h), true);
                case ALREADY_READ -> done(r, refused(ReadRefusal.ALREADY_READ, h), true);
                case EGRESS_LIMIT -> done(r, refused(ReadRefusal.SOURCE_EGRESS_LIMIT, h), true);
                case CLOSED -> done(r, refused(ReadRefusal.SOURCE_CLOSED, h), true);
                case SOURCE_READ_ERROR -> done(r, new ReadOutcome.Failed(ReadFailure.SOURCE_READ_ERROR,
                        "the source could not read its stored block"), true);
                case MALFORMED -> stop(r, new ReadOutcome.Failed(ReadFailure.PROTOCOL_VIOLATION,
                        "the source found our request malformed"));
            }
        }

        private static ReadOutcome.Refused refused(ReadRefusal reason, DataFrames.ResponseHeader h) {
            return new ReadOutcome.Refused(reason, "the source answered " + h.status());
        }

        private void onPayload(Read r) {
            int actual = (int) crc.getValue();
            if (actual != r.crc32c) {
                done(r, new ReadOutcome.Failed(ReadFailure.CHECKSUM_MISMATCH,
                        String.format("CRC32C %08x, the grant says %08x", actual, r.crc32c)), false);
                return;
            }
            done(r, new ReadOutcome.Completed(r.backend, r.route, r.length, clock.getAsLong() - r.admittedNanos,
                    r.fallback), true);
        }

        /** Every byte of the response arrived: the READ physically completed. */
        private void done(Read r, ReadOutcome outcome, boolean reusable) {
            op = null;
            handedOut = null;
            timeout.cancel(false);
            if (reusable) {
                backToPool(this);
            } else {
                channel.close();
            }
            r.finish(outcome);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }

        @SuppressWarnings("deprecation") // newHandle() returns the deprecated Handle type; MaxMessageHandle is current
        RecvByteBufAllocator allocator() {
            return new DefaultMaxMessagesRecvByteBufAllocator() {
                @Override
                public Handle newHandle() {
                    return new MaxMessageHandle() {
                        @Override
                        public ByteBuf allocate(ByteBufAllocator alloc) {
                            return nextBuffer(alloc);
                        }

                        @Override
                        public int guess() {
                            return PAYLOAD_SLICE_BYTES;
                        }
                    };
                }
            };
        }
    }
}
