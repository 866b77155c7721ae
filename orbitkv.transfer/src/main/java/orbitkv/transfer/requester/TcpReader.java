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
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.DefaultMaxMessagesRecvByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.ScheduledFuture;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.zip.CRC32C;
import orbitkv.inventory.PeerIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.NodeId;
import orbitkv.transfer.ReadFailure;
import orbitkv.transfer.ReadResult;
import orbitkv.transfer.ReadRefusal;
import orbitkv.transfer.frame.DataFrames;
import orbitkv.transfer.frame.DataStatus;

/**
 * The TCP backend, requester side (docs/transfer.md "Data channel"): pooled data connections per source
 * endpoint (at most {@code connectionsPerSourceMax}, idle ones included), each carrying up to
 * {@code readsPerConnectionMax} READs of <em>one grant</em> pipelined: requests go out as READs are admitted, the
 * source answers them in order, and the receive loop takes the responses one after the other. A connection serves
 * one grant at a time so that a READ stopped mid-payload (which must close its connection) can only take down
 * READs of its own grant, never another request's.
 *
 * <p>Receive path: each connection's {@link RecvByteBufAllocator} hands the native transport a buffer that
 * <em>is</em> the next slice of the head READ's destination (for a native destination), sized to the bytes the
 * current frame still needs, so the kernel copies the payload straight into requester-owned memory and never
 * past the frame; each slice is checksummed right after it lands, while it is in cache. Heap destinations are
 * filled from a pooled buffer instead.
 *
 * <p>Termination (INV-8): a timeout of the head READ, a stop of the head READ once its payload began, or a broken
 * frame closes the connection, and the outcomes of the READs on it are delivered from the channel's close future,
 * after which the transport writes nothing more into their destinations; only then is each destination range
 * zero-filled and the credits returned. A READ stopped before its payload began (cancelled, or timed out behind
 * the head) ends at once: no byte of it was or will be written into its destination, and its response is skipped
 * when it arrives. A connection left with nothing but skipped responses closes.
 */
final class TcpReader implements AutoCloseable {
    /** Payload slice handed to one socket read: large enough for few syscalls, small enough to checksum in cache. */
    static final int PAYLOAD_SLICE_BYTES = 1 << 20;
    /**
     * A READ queues behind others on a connection only while less than this many payload bytes are ahead of it.
     * Pipelining saves a wake-up and a round trip per READ, which matters for small blocks; a megabyte ahead already
     * keeps the stream busy, and large blocks do better spread over connections (and so over event loops): measured
     * on 2 cores, 1 MiB blocks were 0.63-0.83 of a raw socket copy one per connection against 0.68-0.78 pipelined.
     */
    static final long PIPELINE_AHEAD_BYTES_MAX = PAYLOAD_SLICE_BYTES;

    /**
     * The grant id an AUTHORIZE's connection is assigned to while the AUTHORIZE is out: no READ joins it (READs join
     * connections of their own grant), so an AUTHORIZE always has its connection to itself and is the head.
     */
    static final UUID AUTHORIZING = new UUID(0, 0);

    private final EventLoopGroup group;
    private final Class<? extends Channel> channelType;
    private final int connectionsPerSourceMax;
    private final int readsPerConnectionMax;
    private final long connectTimeoutMs;
    private final LongSupplier clock;
    private final Map<Endpoint, Pool> pools = new HashMap<>();
    private final Set<Connection> open = new HashSet<>();
    /** Payload bytes that did not land in place and were copied from a transport buffer (heap destinations). */
    private final AtomicLong copiedBytes = new AtomicLong();
    private boolean closed;

    /** TLS of the data connections (issue 33), or null for plaintext. */
    private final SslContext tls;

    TcpReader(EventLoopGroup group, Class<? extends Channel> channelType, int connectionsPerSourceMax,
            int readsPerConnectionMax, long connectTimeoutMs, LongSupplier clock, SslContext tls) {
        this.tls = tls;
        this.group = group;
        this.channelType = channelType;
        this.connectionsPerSourceMax = connectionsPerSourceMax;
        this.readsPerConnectionMax = readsPerConnectionMax;
        this.connectTimeoutMs = connectTimeoutMs;
        this.clock = clock;
    }

    /** The connections of one source endpoint; guarded by the reader's lock. */
    static final class Pool {
        final Endpoint endpoint;
        final ArrayDeque<Connection> idle = new ArrayDeque<>();
        /** Connections with READs assigned, connecting ones included. */
        final List<Connection> busy = new ArrayList<>();
        /** Connections open or opening: idle + busy. */
        int open;

        Pool(Endpoint endpoint) {
            this.endpoint = endpoint;
        }
    }

    /**
     * A READ slot of {@code bytes} payload bytes reserved on {@code connection}; {@code fresh} when the connection is
     * still to be opened.
     */
    record Lease(Pool pool, Connection connection, boolean fresh, long bytes) {}

    /**
     * Reserves a READ slot of {@code bytes} for grant {@code grantId} at {@code endpoint}: behind READs of the same
     * grant on a connection with room (fewer than {@code readsPerConnectionMax} READs and less than
     * {@link #PIPELINE_AHEAD_BYTES_MAX} bytes ahead), else on an idle connection, else on a new one; null when
     * {@code connectionsPerSourceMax} connections are busy.
     */
    synchronized Lease reserve(Endpoint endpoint, UUID grantId, long bytes) {
        if (closed) {
            return null;
        }
        Pool p = pools.computeIfAbsent(endpoint, Pool::new);
        for (Connection c : p.busy) {
            if (grantId != AUTHORIZING && grantId.equals(c.grantId) && c.assigned < readsPerConnectionMax
                    && c.assignedBytes < PIPELINE_AHEAD_BYTES_MAX && c.connectFailure == null
                    && (c.connected ? c.channel.isActive() : c.connecting)) {
                c.assigned++;
                c.assignedBytes += bytes;
                return new Lease(p, c, false, bytes);
            }
        }
        Connection c;
        while ((c = p.idle.pollFirst()) != null) {
            if (c.channel.isActive()) {
                assign(p, c, grantId, bytes);
                return new Lease(p, c, false, bytes);
            }
        }
        if (p.open >= connectionsPerSourceMax) {
            return null;
        }
        p.open++;
        c = new Connection(p);
        assign(p, c, grantId, bytes);
        return new Lease(p, c, true, bytes);
    }

    private static void assign(Pool p, Connection c, UUID grantId, long bytes) {
        if (c.assigned != 0) {
            throw new IllegalStateException("assigning a connection with " + c.assigned + " READs to grant " + grantId);
        }
        c.grantId = grantId;
        c.assigned = 1;
        c.assignedBytes = bytes;
        p.busy.add(c);
    }

    /** Gives back an unused lease. */
    synchronized void unreserve(Lease l) {
        if (l.fresh()) {
            l.pool().busy.remove(l.connection());
            dropPermit(l.pool());
        } else {
            unassign(l.connection(), l.bytes());
        }
    }

    /** A READ slot of {@code bytes} on {@code c} is free again; a connection left with none goes idle. */
    private synchronized void unassign(Connection c, long bytes) {
        if (c.assigned <= 0) {
            return; // the connection closed and its slots were dropped with it
        }
        c.assignedBytes -= bytes;
        assert c.assignedBytes >= 0 : "a connection holds " + c.assignedBytes + " assigned bytes";
        if (--c.assigned > 0) {
            return;
        }
        if (c.assignedBytes != 0) {
            throw new IllegalStateException("a connection with no READ assigned holds " + c.assignedBytes + " bytes");
        }
        c.pool.busy.remove(c);
        c.grantId = null;
        if (c.channel == null) {
            return; // it never connected: its permit went with its connect failure
        }
        if (closed || !c.channel.isActive()) {
            c.channel.close();
            return;
        }
        c.pool.idle.addFirst(c);
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

    /**
     * Sends {@code a} (issue 37 item 5) on an idle or new connection to {@code endpoint}, which it has to itself until
     * answered; false, and nothing sent, when {@code connectionsPerSourceMax} connections are busy.
     */
    boolean authorize(Endpoint endpoint, DataAuthorize a) {
        Lease lease = reserve(endpoint, AUTHORIZING, 0);
        if (lease == null) {
            return false;
        }
        run(a, lease);
        return true;
    }

    /** Runs {@code read} (a READ or an AUTHORIZE) on the leased connection, or on a new one. */
    void run(Exchange read, Lease lease) {
        try {
            runOrThrow(read, lease);
        } catch (RuntimeException e) { // e.g. the event loop group is shutting down
            ReadResult failed = new ReadResult.Failed(ReadFailure.CONNECT_FAILED, "cannot run the READ: " + e);
            Connection c = lease.connection();
            if (lease.fresh()) {
                notConnected(c, failed).forEach(w -> w.finish(failed));
            } else if (c.channel != null) {
                c.channel.close();
            }
            read.finish(failed);
        }
    }

    private void runOrThrow(Exchange read, Lease lease) {
        Connection c = lease.connection();
        if (!lease.fresh()) {
            c.start(read);
            return;
        }
        synchronized (this) {
            c.connecting = true; // READs of its grant may queue on it now (an unused fresh lease never connects)
        }
        long remainingMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(read.deadlineNanos - clock.getAsLong()));
        Bootstrap b = new Bootstrap().group(group).channel(channelType)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(connectTimeoutMs, remainingMs));
        if (tls == null) {
            b.option(ChannelOption.RECVBUF_ALLOCATOR, c.allocator()).handler(c);
        } else {
            // The socket carries ciphertext: it must not land in the destination, so the receive buffers are the
            // transport's and the decrypted payload is copied (docs/transfer.md "Transport security").
            NodeId expected = read.sourceNode();
            b.handler(new ChannelInitializer<Channel>() {
                @Override
                protected void initChannel(Channel ch) {
                    SslHandler ssl = tls.newHandler(ch.alloc());
                    ssl.handshakeFuture().addListener(f -> {
                        if (f.isSuccess() && !(PeerIdentity.of(ssl.engine().getSession())
                                instanceof PeerIdentity.Named.Node n && n.nodeId().equals(expected))) {
                            c.refuseSource(expected, PeerIdentity.of(ssl.engine().getSession()));
                        }
                    });
                    ch.pipeline().addLast(ssl, c);
                }
            });
        }
        b.connect(lease.pool().endpoint.host(), lease.pool().endpoint.port()).addListener((ChannelFuture f) -> {
            if (!f.isSuccess()) {
                boolean late = f.cause() instanceof ConnectTimeoutException
                        && clock.getAsLong() - read.deadlineNanos >= 0;
                List<Exchange> waiting = notConnected(c, late ? null : new ReadResult.Failed(ReadFailure.CONNECT_FAILED,
                        "connect to " + lease.pool().endpoint + " failed: " + f.cause()));
                read.finish(late ? timedOut(read) : c.connectFailure);
                waiting.forEach(w -> w.finish(late ? timedOut(w) : c.connectFailure));
                return;
            }
            List<Exchange> waiting = c.attach(f.channel());
            if (waiting == null) {
                f.channel().close();
                read.finish(c.connectFailure);
                notConnected(c, c.connectFailure).forEach(w -> w.finish(c.connectFailure));
                return;
            }
            c.start(read);
            waiting.forEach(c::start);
        });
    }

    private ReadResult timedOut(Exchange r) {
        return new ReadResult.TimedOut(clock.getAsLong() - r.admittedNanos);
    }

    /**
     * A connection that will not connect: it leaves the pool and its READs waiting for it end with
     * {@code failure} (a timed-out connect when null); returns those READs.
     */
    private synchronized List<Exchange> notConnected(Connection c, ReadResult failure) {
        if (c.connectFailure == null) {
            c.connectFailure = failure != null ? failure : new ReadResult.Failed(ReadFailure.CONNECT_FAILED,
                    "connect to " + c.pool.endpoint + " timed out");
            c.pool.busy.remove(c);
            dropPermit(c.pool);
        }
        List<Exchange> waiting = List.copyOf(c.waiting);
        c.waiting.clear();
        return waiting;
    }

    /**
     * A connected connection joins the open set; returns the READs pipelined on it while it connected, or null
     * once the reader closed (then {@code connectFailure} says why).
     */
    private synchronized List<Exchange> opened(Connection c) {
        if (closed) {
            c.connectFailure = new ReadResult.Refused(ReadRefusal.ENGINE_CLOSED, "the engine closed");
            c.pool.busy.remove(c);
            dropPermit(c.pool);
            return null;
        }
        open.add(c);
        c.connected = true;
        List<Exchange> waiting = List.copyOf(c.waiting);
        c.waiting.clear();
        return waiting;
    }

    private synchronized void closedConnection(Connection c) {
        if (open.remove(c)) {
            c.pool.idle.remove(c);
            c.pool.busy.remove(c);
            c.assigned = 0;
            c.assignedBytes = 0;
            c.grantId = null;
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

    /** A request (READ or AUTHORIZE) sent on a connection whose response has not passed yet. */
    static final class Pending {
        final Exchange read;
        ScheduledFuture<?> timeout;
        /** The READ ended before its payload began; its response is skipped when it arrives. */
        boolean skipped;
        /** An AUTHORIZE's answer bytes, allocated once its header announced a length within the bound. */
        byte[] answer;
        int answerCrc;
        /** When the event loop sent the request, and when its answer's header had arrived (DataExchangeEvent). */
        long sentNanos;
        long headerNanos;

        Pending(Exchange read) {
            this.read = read;
        }

        /** The payload bytes the response carries after its header (known once the header arrived). */
        long payloadBytes() {
            return answer != null ? answer.length : read.length;
        }
    }

    /**
     * One data connection and its receive state. The slot fields ({@code grantId}, {@code assigned},
     * {@code connected}) are guarded by the reader's lock; everything else runs on the connection's event loop.
     */
    final class Connection extends ChannelInboundHandlerAdapter {
        final Pool pool;
        Channel channel;
        UUID grantId;
        int assigned;
        long assignedBytes;
        boolean connected;
        boolean connecting;
        /** READs pipelined on this connection while it connects (at most {@code readsPerConnectionMax - 1}). */
        final List<Exchange> waiting = new ArrayList<>();
        /** Why this connection never connected; its waiting READs end with it. */
        ReadResult connectFailure;
        /** READs sent and not yet answered, in request order: the source answers in this order. */
        private final ArrayDeque<Pending> sent = new ArrayDeque<>();
        private final byte[] header = new byte[DataFrames.RESPONSE_HEADER_BYTES];
        private final CRC32C crc = new CRC32C();
        private int headerFill;
        private long received;
        private ByteBuf handedOut;
        /** Set when this connection is closing: nothing more is received; the close future delivers outcomes. */
        private boolean closing;
        /** The outcome of the head READ whose stop closed the connection; null for a plain loss. */
        private ReadResult headOutcome;
        /** The grant this connection sent a BIND for last (event loop only); its READs need no new BIND. */
        private UUID bound;
        private boolean closedSeen;

        Connection(Pool pool) {
            this.pool = pool;
        }

        /** The READs that waited for the connection, or null when the reader closed meanwhile. */
        List<Exchange> attach(Channel ch) {
            this.channel = ch;
            List<Exchange> waiting = opened(this);
            if (waiting != null) {
                ch.closeFuture().addListener(f -> onClosed());
            }
            return waiting;
        }

        /** Sends {@code read} on this connection, once it is connected. */
        void start(Exchange read) {
            ReadResult failed;
            synchronized (TcpReader.this) {
                if (!connected && connectFailure == null) {
                    waiting.add(read);
                    return;
                }
                failed = connected ? null : connectFailure;
            }
            if (failed != null) {
                read.finish(failed);
                return;
            }
            channel.eventLoop().execute(() -> begin(read));
        }

        private void begin(Exchange read) {
            if (closedSeen || closing) {
                unassign(this, read.length);
                read.finish(sourceRefused != null ? new ReadResult.Failed(ReadFailure.PROTOCOL_VIOLATION, sourceRefused)
                        : new ReadResult.Failed(ReadFailure.CONNECTION_LOST, "the data connection to "
                                + pool.endpoint + " closed before the READ was sent"));
                return;
            }
            if (read.cancelRequested()) {
                unassign(this, read.length);
                read.finish(new ReadResult.Cancelled());
                return;
            }
            Pending p = new Pending(read);
            sent.addLast(p);
            p.sentNanos = clock.getAsLong();
            long delay = read.deadlineNanos - p.sentNanos;
            p.timeout = channel.eventLoop().schedule(() -> stop(p, new ReadResult.TimedOut(
                    clock.getAsLong() - read.admittedNanos)), Math.max(0, delay), TimeUnit.NANOSECONDS);
            switch (read) {
                case DataAuthorize a -> sendAuthorize(a);
                case Read r -> sendRead(p, r);
            }
        }

        /** The AUTHORIZE header and body in one write; the source's answer binds the connection or unbinds it. */
        private void sendAuthorize(DataAuthorize a) {
            bound = null; // until the answer names the grant it bound
            ByteBuf req = channel.alloc().buffer(DataFrames.REQUEST_BYTES + a.request.length);
            DataFrames.writeAuthorize(req, a.request.length, a.readId);
            req.writeBytes(a.request);
            channel.writeAndFlush(req).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
        }

        private void sendRead(Pending p, Read read) {
            if (!read.grant.id().equals(bound)) { // the source READs a grant only on a connection bound to it
                ByteBuf bind = channel.alloc().buffer(DataFrames.REQUEST_BYTES);
                DataFrames.writeBind(bind, read.grant.id(), read.grant.secret);
                channel.write(bind, channel.voidPromise());
                bound = read.grant.id();
            }
            ByteBuf req = channel.alloc().buffer(DataFrames.REQUEST_BYTES);
            DataFrames.writeRequest(req, read.grant.id(), read.index, read.readId);
            channel.writeAndFlush(req).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
            read.onCancel(() -> channel.eventLoop().execute(() -> stop(p, new ReadResult.Cancelled())));
        }

        /**
         * Stops one READ. The head READ once its payload began, or timed out (the stream stalls), can only be
         * stopped by closing the connection; any other READ ends now and its response is skipped.
         */
        private void stop(Pending p, ReadResult outcome) {
            if (closing || p.skipped || !sent.contains(p)) {
                return; // answered, already ended, or the close future delivers its outcome
            }
            boolean head = sent.peekFirst() == p;
            if (head && (headerFill == header.length || outcome instanceof ReadResult.TimedOut)) {
                closeWith(outcome);
                return;
            }
            p.skipped = true;
            p.timeout.cancel(false);
            p.read.finish(outcome); // nothing of it was or will be written into its destination
            if (sent.stream().allMatch(x -> x.skipped)) {
                closeWith(null); // nobody waits on this connection: do not keep it for skipped bytes
            }
        }

        /** Why {@link #refuseSource} closed this connection; null otherwise. Event loop only. */
        private String sourceRefused;

        /** The source's certificate does not name the node the grant came from: nothing is read from it. */
        void refuseSource(NodeId expected, PeerIdentity.Named named) {
            String why = switch (named) {
                case PeerIdentity.Named.Node n -> "names node " + n.nodeId();
                case PeerIdentity.Named.None n -> "names no node: " + n.why();
            };
            // Kept for READs that reach this connection after the refusal (it may come before any READ was sent).
            sourceRefused = "the data endpoint " + pool.endpoint + " is not source " + expected + ": its certificate " + why;
            Pending head = sent.peekFirst();
            closeWith(head == null ? null : new ReadResult.Failed(ReadFailure.PROTOCOL_VIOLATION, sourceRefused));
        }

        private void closeWith(ReadResult outcomeOfHead) {
            closing = true;
            headOutcome = outcomeOfHead;
            channel.close();
        }

        private void onClosed() {
            closedSeen = true;
            closing = true;
            closedConnection(this);
            handedOut = null;
            Pending head = sent.peekFirst();
            String progress = headerFill < header.length ? headerFill + " header bytes"
                    : head == null ? "a complete response" : received + " of " + head.payloadBytes() + " payload bytes";
            Pending p;
            while ((p = sent.pollFirst()) != null) {
                p.timeout.cancel(false);
                if (p.skipped) {
                    continue;
                }
                p.read.finish(p == head && headOutcome != null ? headOutcome
                        : new ReadResult.Failed(ReadFailure.CONNECTION_LOST, "the data connection to " + pool.endpoint
                                + " closed after " + (p == head ? progress
                                        : "the READ was pipelined behind one that did not complete")));
            }
        }

        /** The next buffer the transport reads into: never longer than the current frame still needs. */
        ByteBuf nextBuffer(ByteBufAllocator alloc) {
            Pending p = sent.peekFirst();
            if (p == null || headerFill < header.length || closing) {
                return alloc.directBuffer(header.length - (p == null ? 0 : Math.min(headerFill, header.length - 1)));
            }
            int n = (int) Math.min(PAYLOAD_SLICE_BYTES, Math.max(1, p.payloadBytes() - received));
            if (!(p.read instanceof Read r)) {
                return alloc.directBuffer(n); // an AUTHORIZE's answer is copied into its array
            }
            MemorySegment dst = r.destination.segment();
            if (!p.skipped && dst.isNative() && received + n <= r.length) {
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
            while (buf.isReadable() && !closing) {
                Pending p = sent.peekFirst();
                if (p == null) {
                    closeWith(null); // bytes nobody asked for: the framing is lost
                    return;
                }
                if (headerFill < header.length) {
                    int n = Math.min(buf.readableBytes(), header.length - headerFill);
                    buf.readBytes(header, headerFill, n);
                    headerFill += n;
                    if (headerFill == header.length) {
                        onHeader(p);
                    }
                } else if (p.answer != null) {
                    int n = (int) Math.min(buf.readableBytes(), p.answer.length - received);
                    buf.readBytes(p.answer, (int) received, n);
                    crc.update(p.answer, (int) received, n);
                    received += n;
                    if (received == p.answer.length) {
                        onAnswer(p, (DataAuthorize) p.read);
                    }
                } else {
                    Read r = (Read) p.read;
                    int n = (int) Math.min(buf.readableBytes(), r.length - received);
                    if (!p.skipped) {
                        MemorySegment dst = r.destination.segment();
                        if (buf != handedOut) { // in place already when the transport read into the handed-out slice
                            MemorySegment.copy(MemorySegment.ofBuffer(buf.nioBuffer(buf.readerIndex(), n)), 0, dst,
                                    received, n);
                            copiedBytes.addAndGet(n);
                        }
                        crc.update(dst.asSlice(received, n).asByteBuffer());
                    }
                    received += n;
                    buf.skipBytes(n);
                    if (received == r.length) {
                        onPayload(p);
                    }
                }
            }
        }

        private void onHeader(Pending p) {
            p.headerNanos = clock.getAsLong();
            DataFrames.ResponseHeader h;
            try {
                h = DataFrames.readResponseHeader(header);
            } catch (DataFrames.MalformedFrame e) {
                closeWith(new ReadResult.Failed(ReadFailure.PROTOCOL_VIOLATION, "response header: " + e.getMessage()));
                return;
            }
            if (p.read instanceof DataAuthorize a) {
                onAnswerHeader(p, a, h);
                return;
            }
            Read r = (Read) p.read;
            if (h.status() == DataStatus.BAD_SECRET || h.status() == DataStatus.PEER_IDENTITY_MISMATCH) {
                // the answer to our BIND (read id 0); the source closes the connection after it
                closeWith(new ReadResult.Failed(ReadFailure.PROTOCOL_VIOLATION, "the source refused our BIND of grant "
                        + r.grant.id() + ": " + h.status()));
                return;
            }
            if (h.readId() != r.readId) {
                closeWith(new ReadResult.Failed(ReadFailure.PROTOCOL_VIOLATION,
                        "response to read " + h.readId() + ", expected " + r.readId));
                return;
            }
            if (h.status() == DataStatus.OK && h.length() != r.length) {
                closeWith(new ReadResult.Failed(ReadFailure.PROTOCOL_VIOLATION,
                        "the source sends " + h.length() + " bytes, the grant says " + r.length));
                return;
            }
            if (p.skipped) {
                if (h.status() == DataStatus.MALFORMED) {
                    closeWith(null);
                } else if (h.status() != DataStatus.OK || r.length == 0) {
                    answered(p, null, true);
                }
                return; // an OK payload is skipped, then answered
            }
            switch (h.status()) {
                case OK -> {
                    if (r.length == 0) {
                        onPayload(p);
                    }
                }
                case GRANT_UNKNOWN -> answered(p, refused(ReadRefusal.SOURCE_GRANT_ENDED, h), true);
                case BLOCK_NOT_GRANTED -> answered(p, refused(ReadRefusal.BLOCK_NOT_GRANTED, h), true);
                case ALREADY_READ -> answered(p, refused(ReadRefusal.ALREADY_READ, h), true);
                case EGRESS_LIMIT -> answered(p, refused(ReadRefusal.SOURCE_EGRESS_LIMIT, h), true);
                case CLOSED -> answered(p, refused(ReadRefusal.SOURCE_CLOSED, h), true);
                case SOURCE_READ_ERROR -> answered(p, new ReadResult.Failed(ReadFailure.SOURCE_READ_ERROR,
                        "the source could not read its stored block"), true);
                case MALFORMED -> closeWith(new ReadResult.Failed(ReadFailure.PROTOCOL_VIOLATION,
                        "the source found our request malformed"));
                case NOT_BOUND, BAD_SECRET, PEER_IDENTITY_MISMATCH -> closeWith(new ReadResult.Failed(
                        ReadFailure.PROTOCOL_VIOLATION, "the source answered " + h.status() + " to a READ of grant "
                                + r.grant.id()));
            }
        }

        /**
         * The header of an AUTHORIZE's answer: OK with the answer's length (bounded before the array is allocated),
         * or MALFORMED from a source without the frame (read id 0; it closes the connection after it).
         */
        private void onAnswerHeader(Pending p, DataAuthorize a, DataFrames.ResponseHeader h) {
            if (h.status() == DataStatus.MALFORMED) {
                finishAuthorize(p, a, new DataAuthorize.Outcome.Unsupported("the source " + pool.endpoint
                        + " answered MALFORMED to an AUTHORIZE"), false);
                return;
            }
            if (h.readId() != a.readId) {
                closeWith(new ReadResult.Failed(ReadFailure.PROTOCOL_VIOLATION,
                        "response to request " + h.readId() + ", expected AUTHORIZE " + a.readId));
                return;
            }
            if (h.status() != DataStatus.OK) {
                closeWith(new ReadResult.Failed(ReadFailure.PROTOCOL_VIOLATION,
                        "the source answered " + h.status() + " to an AUTHORIZE"));
                return;
            }
            if (h.length() > a.answerBytesMax) {
                closeWith(new ReadResult.Failed(ReadFailure.PROTOCOL_VIOLATION, "an Authorize answer of " + h.length()
                        + " bytes exceeds its bound of " + a.answerBytesMax));
                return;
            }
            p.answer = new byte[(int) h.length()];
            p.answerCrc = h.crc32c();
            if (h.length() == 0) {
                onAnswer(p, a);
            }
        }

        /**
         * Every byte of an AUTHORIZE's answer arrived: checked and parsed here, so that the connection knows which
         * grant the source bound it to (the granted one, or none). An answer that fails its checksum or does not parse
         * leaves that unknown: the connection closes.
         */
        private void onAnswer(Pending p, DataAuthorize a) {
            if ((int) crc.getValue() != p.answerCrc) {
                finishAuthorize(p, a, new DataAuthorize.Outcome.Stopped(new ReadResult.Failed(
                        ReadFailure.PROTOCOL_VIOLATION, "the Authorize answer fails its CRC32C")), false);
                return;
            }
            orbitkv.transfer.wire.AuthorizeResponse r;
            try {
                r = orbitkv.transfer.wire.AuthorizeResponse.parseFrom(p.answer);
            } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                finishAuthorize(p, a, new DataAuthorize.Outcome.Stopped(new ReadResult.Failed(
                        ReadFailure.PROTOCOL_VIOLATION, "unparseable Authorize answer: " + e.getMessage())), false);
                return;
            }
            bound = r.hasAuthorized() && r.getAuthorized().hasGrantId()
                    ? new UUID(r.getAuthorized().getGrantId().getMsb(), r.getAuthorized().getGrantId().getLsb()) : null;
            finishAuthorize(p, a, new DataAuthorize.Outcome.Answered(r), true);
        }

        /** An AUTHORIZE's answer passed: its slot is free (the connection idle) before its outcome is delivered. */
        private void finishAuthorize(Pending p, DataAuthorize a, DataAuthorize.Outcome o, boolean reusable) {
            passHead(p);
            DataExchangeEvent.record(p, clock, o);
            if (!reusable) {
                closeWith(null);
            } else {
                unassign(this, 0);
            }
            a.answered(o);
        }

        /** The head's response has passed ({@code p} must be the head): the receive state starts a new response. */
        private void passHead(Pending p) {
            if (sent.pollFirst() != p) {
                throw new IllegalStateException("answered a request that is not the head of its connection");
            }
            p.timeout.cancel(false);
            headerFill = 0;
            received = 0;
            crc.reset();
            handedOut = null;
        }

        private static ReadResult.Refused refused(ReadRefusal reason, DataFrames.ResponseHeader h) {
            return new ReadResult.Refused(reason, "the source answered " + h.status());
        }

        private void onPayload(Pending p) {
            if (p.skipped) {
                answered(p, null, true);
                return;
            }
            Read r = (Read) p.read;
            int actual = (int) crc.getValue();
            if (actual != r.crc32c) {
                answered(p, new ReadResult.Failed(ReadFailure.CHECKSUM_MISMATCH,
                        String.format("CRC32C %08x, the grant says %08x", actual, r.crc32c)), false);
                return;
            }
            answered(p, new ReadResult.Completed(r.backend, r.route, r.length, clock.getAsLong() - r.admittedNanos,
                    r.fallback), true);
        }

        /**
         * Every byte of the head READ's response arrived: the READ physically completed. Its slot is free again; a
         * connection whose framing can no longer be trusted ({@code reusable} false) closes after the outcome, and
         * READs pipelined behind it end as lost.
         */
        private void answered(Pending p, ReadResult outcome, boolean reusable) {
            passHead(p);
            DataExchangeEvent.record(p, clock, outcome);
            if (!reusable) {
                p.read.finish(outcome);
                closeWith(null);
                return;
            }
            unassign(this, p.read.length);
            if (!p.skipped) {
                p.read.finish(outcome);
            }
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
