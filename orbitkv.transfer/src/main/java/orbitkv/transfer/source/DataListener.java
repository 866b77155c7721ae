package orbitkv.transfer.source;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.flow.FlowControlHandler;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.stream.ChunkedNioFile;
import io.netty.handler.stream.ChunkedWriteHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import orbitkv.transfer.DataConnectionRefusal;
import orbitkv.transfer.DataConnectionTimeout;
import orbitkv.transfer.DataReadPause;
import orbitkv.transfer.DataRefusal;
import orbitkv.transfer.EgressAccount;
import orbitkv.inventory.PeerIdentity;
import orbitkv.membership.NodeId;
import orbitkv.transfer.frame.BoundedMessage;
import orbitkv.transfer.wire.AuthorizeRequest;
import orbitkv.transfer.wire.AuthorizeResponse;
import orbitkv.transfer.PayloadSource.PayloadLocation;
import orbitkv.transfer.PeerRouteClass;
import orbitkv.transfer.TransferConfig;
import orbitkv.transfer.frame.CountBytesWindow;
import orbitkv.transfer.frame.DataFrames;
import orbitkv.transfer.frame.DataStatus;

/**
 * The source's TCP data listener (docs/transfer.md "Data channel") on the caller's Netty native transport.
 * Each connection reads fixed 40-byte READ requests and answers each, strictly in request order (a requester may
 * pipeline several), with a 32-byte header and the block:
 * from the DRAM arena as a {@code ByteBuf} wrapping the pinned read-only segment (the socket reads the arena
 * directly: no copy in user space), from an SSD file as a {@link DefaultFileRegion} (sendfile/splice).
 *
 * <p>A connection READs only the grant a BIND with the grant's secret bound it to (issue 33: a grant id alone reads
 * nothing). With TLS (the Manager's peer mutual-TLS files) an {@link SslHandler} heads each connection and requires a
 * client certificate signed by the cluster CA; a plaintext client fails the handshake and is closed, and a BIND binds
 * a grant only from the certificate of the grant's requester. A file region cannot pass through {@link SslHandler},
 * so SSD blocks are then read in {@link ChunkedNioFile} chunks; the arena buffer is encrypted from the pinned segment.
 *
 * <p>A send holds its grant's pins and its bytes in the egress window ({@code sourceEgressInFlightBytesMax})
 * until the write completes or fails; a READ that does not fit the window is refused with
 * {@link DataStatus#EGRESS_LIMIT} and may be asked again.
 *
 * <p>A send's write completes only as fast as the requester reads. So that a requester that stops reading
 * (stalled, partitioned) cannot hold the pin past its grant, each send is registered with the grant table
 * together with a cut that closes its connection; the table cuts it when the grant ends ({@link GrantTable}).
 */
final class DataListener implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DataListener.class.getName());
    /** Accept-failure log lines go to this class's logger as warnings. */
    static final Consumer<String> WARN = line -> LOG.log(System.Logger.Level.WARNING, line);
    /**
     * The most bytes one socket read takes from a data connection: the most READ frames decoded at once and held
     * (in the {@link FlowControlHandler}) before they are served one by one is this over 40. Four KiB take a whole
     * pipeline of 64 READs in one read.
     */
    static final int READ_BYTES_MAX = 4096;
    /** After a failed accept the listener stops accepting this long (as Netty's acceptor does), so it cannot spin. */
    static final long ACCEPT_PAUSE_MS = 1_000;
    /** At most one accept-failure log line per this interval; the others are counted and reported with the next. */
    static final long ACCEPT_FAILURE_LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** The listening channel, set once bound (before it, no connection can be accepted). */
    private Channel server;
    private final ChannelGroup children = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final TransferConfig config;
    private final GrantTable grants;
    private final CountBytesWindow egress;
    private final SourceCounters counters;
    private final Admission admission;
    /** TLS of every connection (issue 33: the peer mutual-TLS files), or null for plaintext. */
    private final SslContext tls;
    /** The node-wide account of the NIC's egress every send is charged to beside {@link #egress} (issue 39). */
    private final NicEgress nicEgress;
    /**
     * Answers AUTHORIZE frames (issue 37 item 5): the source's whole Authorize decision, as the gRPC call makes it.
     * Null until {@link #authorizer(DataAuthorizer)} installs it; until then an AUTHORIZE is refused MALFORMED and
     * its connection closed, as a source without the frame would.
     */
    private volatile DataAuthorizer authorizer;

    /** The Authorize decision the data channel's AUTHORIZE frames get: the gRPC service's own (never blocks). */
    @FunctionalInterface
    interface DataAuthorizer {
        AuthorizeResponse authorize(BoundedMessage<AuthorizeRequest> request, Optional<NodeId> peerNodeId);
    }

    /** Installs the decision AUTHORIZE frames get (once the authorization service, which names this listener, exists). */
    void authorizer(DataAuthorizer a) {
        this.authorizer = a;
    }

    private DataListener(TransferConfig config, GrantTable grants, CountBytesWindow egress, SourceCounters counters,
            SslContext tls, NicEgress nicEgress) {
        this.tls = tls;
        this.nicEgress = nicEgress;
        this.config = config;
        this.grants = grants;
        this.egress = egress;
        this.counters = counters;
        this.admission = new Admission(config.dataConnectionsMax(), config.dataConnectionsPerAddressMax());
    }

    static DataListener bind(InetSocketAddress address, EventLoopGroup group, Class<? extends ServerChannel> channelType,
            TransferConfig config, GrantTable grants, CountBytesWindow egress, SourceCounters counters)
            throws IOException {
        return bind(address, group, channelType, config, grants, egress, counters, (SslContext) null);
    }

    /** As above; {@code tls} non-null runs every connection over TLS (issue 33). */
    static DataListener bind(InetSocketAddress address, EventLoopGroup group, Class<? extends ServerChannel> channelType,
            TransferConfig config, GrantTable grants, CountBytesWindow egress, SourceCounters counters, SslContext tls)
            throws IOException {
        return bind(address, group, channelType, config, grants, egress, counters, tls,
                WARN);
    }

    /** As above, plaintext, with the accept-failure log lines going to {@code acceptFailureLog} (tests). */
    static DataListener bind(InetSocketAddress address, EventLoopGroup group, Class<? extends ServerChannel> channelType,
            TransferConfig config, GrantTable grants, CountBytesWindow egress, SourceCounters counters,
            Consumer<String> acceptFailureLog) throws IOException {
        return bind(address, group, channelType, config, grants, egress, counters, null, acceptFailureLog);
    }

    /** As above, with TLS when {@code tls} is non-null. */
    static DataListener bind(InetSocketAddress address, EventLoopGroup group, Class<? extends ServerChannel> channelType,
            TransferConfig config, GrantTable grants, CountBytesWindow egress, SourceCounters counters, SslContext tls,
            Consumer<String> acceptFailureLog) throws IOException {
        return bind(address, group, channelType, config, grants, egress, counters, tls, acceptFailureLog,
                NicEgress.NONE);
    }

    /** As above; every send is also charged to {@code nicEgress} (issue 39 item 2). */
    static DataListener bind(InetSocketAddress address, EventLoopGroup group, Class<? extends ServerChannel> channelType,
            TransferConfig config, GrantTable grants, CountBytesWindow egress, SourceCounters counters, SslContext tls,
            Consumer<String> acceptFailureLog, NicEgress nicEgress) throws IOException {
        // built before binding: a connection accepted as soon as the socket listens finds its listener
        DataListener self = new DataListener(config, grants, egress, counters, tls, nicEgress);
        ServerBootstrap b = new ServerBootstrap().group(group).channel(channelType)
                .handler(new AcceptGuard(self.admission, counters, acceptFailureLog))
                .childOption(ChannelOption.TCP_NODELAY, true)
                // reading is driven by BlockSender (bounded pipelining, backpressure), never automatic
                .childOption(ChannelOption.AUTO_READ, false)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WriteBufferWaterMark.DEFAULT)
                .childOption(ChannelOption.RECVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(64, 1024, READ_BYTES_MAX))
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        self.initChild(ch);
                    }
                });
        ChannelFuture bound = b.bind(address).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            throw new IOException("cannot bind the transfer data listener to " + address, bound.cause());
        }
        self.server = bound.channel();
        return self;
    }

    /**
     * Builds an admitted connection's pipeline (the {@link AcceptGuard} took its slot): the one place that does
     * (issue 33). Reading is manual: {@link BlockSender} asks for one READ frame at a time while fewer than
     * {@code dataReadsQueuedPerConnectionMax} answers are unwritten and the channel is writable.
     */
    private void initChild(Channel ch) {
        InetAddress peer = peer(ch);
        children.add(ch);
        counters.dataConnections.incrementAndGet();
        ch.closeFuture().addListener(f -> {
            admission.release(peer);
            counters.dataConnections.decrementAndGet();
        });
        if (tls != null) { // issue 33: TLS first; a plaintext client fails the handshake and is closed
            ch.pipeline().addLast(tls.newHandler(ch.alloc()));
        }
        ch.pipeline().addLast(
                // Answers produced while one socket read is processed go out with one flush (one writev).
                new FlushConsolidationHandler(FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, false));
        if (tls != null) { // a file region cannot pass SslHandler: SSD blocks go as chunks under TLS
            ch.pipeline().addLast(new ChunkedWriteHandler());
        }
        ch.pipeline().addLast(
                // no input and no output progress (pending output observed) for the idle deadline: closed
                new IdleStateHandler(true, 0, 0, config.dataIdleTimeoutMs(), TimeUnit.MILLISECONDS),
                new RequestDecoder(config.dataHeaderTimeoutMs(), config.authorizeRequestBytesMax(), counters),
                // holds the frames of one socket read and hands them on one per read() request
                new FlowControlHandler(),
                new BlockSender(grants, egress, nicEgress, counters, config.dataReadsQueuedPerConnectionMax(),
                        tls != null, () -> authorizer, config.authorizeRequestBytesMax()));
    }

    InetSocketAddress boundAddress() {
        return (InetSocketAddress) server.localAddress();
    }

    /** The listening channel (tests fire accept failures through its pipeline). */
    Channel serverChannel() {
        return server;
    }

    @Override
    public void close() {
        server.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        children.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /** The connection caps: all connections and connections per peer IP address (BND-1). */
    static final class Admission {
        private final int max;
        private final int perAddressMax;
        private final Map<InetAddress, Integer> perAddress = new HashMap<>();
        private int open;

        Admission(int max, int perAddressMax) {
            this.max = max;
            this.perAddressMax = perAddressMax;
        }

        /** Takes a slot for {@code peer}; null when admitted, else the bound that refuses it. */
        synchronized DataConnectionRefusal tryAdmit(InetAddress peer) {
            if (open >= max) {
                return DataConnectionRefusal.CONNECTIONS_MAX;
            }
            int n = perAddress.getOrDefault(peer, 0);
            if (n >= perAddressMax) {
                return DataConnectionRefusal.CONNECTIONS_PER_ADDRESS_MAX;
            }
            perAddress.put(peer, n + 1);
            open++;
            return null;
        }

        synchronized void release(InetAddress peer) {
            open--;
            perAddress.computeIfPresent(peer, (k, n) -> n > 1 ? n - 1 : null);
        }
    }

    private static InetAddress peer(Channel ch) {
        return ch.remoteAddress() instanceof InetSocketAddress a ? a.getAddress() : null;
    }

    /**
     * The server channel's handler, on the accepting event loop. Admission: an accepted connection beyond the
     * listener's or its peer address's cap is closed at once, before it is registered with any event loop (so a
     * connection storm costs the loops that serve admitted connections nothing), and counted by bound. (A connection
     * whose registration then fails, which happens only while the event loops shut down, keeps its slot.)
     * Accept failures: counted, logged at most one line a second (with the number left out), and accepting pauses
     * for {@link #ACCEPT_PAUSE_MS} as Netty's acceptor would. The failure is not passed on: the acceptor behind would
     * hand it to the pipeline's tail, which logs every one with its stack trace (issue 33: 1.28 M of them in 20 s).
     */
    static final class AcceptGuard extends ChannelInboundHandlerAdapter {
        private final Admission admission;
        private final SourceCounters counters;
        private final Consumer<String> log;
        private long lastLogNanos;
        private boolean loggedOnce;
        private long suppressed;

        AcceptGuard(Admission admission, SourceCounters counters, Consumer<String> log) {
            this.admission = admission;
            this.counters = counters;
            this.log = log;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            Channel child = (Channel) msg;
            DataConnectionRefusal refused = admission.tryAdmit(peer(child));
            if (refused != null) {
                counters.dataConnectionRefusals.increment(refused);
                child.unsafe().closeForcibly(); // not registered yet: closes the socket now
                return;
            }
            ctx.fireChannelRead(child);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            counters.dataAcceptFailures.incrementAndGet();
            long now = System.nanoTime();
            if (!loggedOnce || now - lastLogNanos >= ACCEPT_FAILURE_LOG_INTERVAL_NANOS) {
                log.accept("transfer data listener " + ctx.channel().localAddress()
                        + ": accept failed: " + cause + (suppressed > 0 ? " (" + suppressed
                        + " more accept failures since the last line)" : "") + "; total "
                        + counters.dataAcceptFailures.get());
                loggedOnce = true;
                lastLogNanos = now;
                suppressed = 0;
            } else {
                suppressed++;
            }
            ChannelConfig cfg = ctx.channel().config();
            if (cfg.isAutoRead()) {
                cfg.setAutoRead(false);
                ctx.channel().eventLoop().schedule(() -> {
                    cfg.setAutoRead(true);
                }, ACCEPT_PAUSE_MS, TimeUnit.MILLISECONDS);
            }
        }
    }

    /**
     * Request frames: 40 bytes, or for an AUTHORIZE 40 bytes and its body, each passed on as one buffer. The body's
     * length is checked against {@code authorizeRequestBytesMax} before anything waits for it (BND-1): beyond it the
     * header alone is passed on (the sender refuses it by name and closes) and nothing after it is decoded. Plus
     * the partial-request deadline: a frame's first bytes must be followed by the rest within
     * {@code dataHeaderTimeoutMs} (measured from the socket read that left a partial frame; a read that completes a
     * frame starts the deadline anew), else the connection is closed (counted as {@link DataConnectionTimeout#HEADER}).
     */
    static final class RequestDecoder extends ByteToMessageDecoder {
        private final long headerTimeoutMs;
        private final int authorizeBytesMax;
        private final SourceCounters counters;
        private ScheduledFuture<?> deadline;
        /** An oversized AUTHORIZE was passed on: what follows is its body, never decoded as frames. */
        private boolean discarding;

        RequestDecoder(long headerTimeoutMs, int authorizeBytesMax, SourceCounters counters) {
            this.headerTimeoutMs = headerTimeoutMs;
            this.authorizeBytesMax = authorizeBytesMax;
            this.counters = counters;
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            if (discarding) {
                in.skipBytes(in.readableBytes());
                return;
            }
            if (in.readableBytes() < DataFrames.REQUEST_BYTES) {
                return;
            }
            long body = DataFrames.authorizeBodyBytes(in);
            if (body < 0) {
                out.add(in.readRetainedSlice(DataFrames.REQUEST_BYTES));
            } else if (body > authorizeBytesMax) {
                discarding = true;
                out.add(in.readRetainedSlice(DataFrames.REQUEST_BYTES));
                in.skipBytes(in.readableBytes());
            } else if (in.readableBytes() >= DataFrames.REQUEST_BYTES + body) {
                out.add(in.readRetainedSlice(DataFrames.REQUEST_BYTES + (int) body));
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
            int held = actualReadableBytes() + (msg instanceof ByteBuf b ? b.readableBytes() : 0);
            super.channelRead(ctx, msg);
            int partial = actualReadableBytes();
            boolean completedAFrame = held - partial > 0;
            if (deadline != null && (partial == 0 || completedAFrame)) {
                deadline.cancel(false);
                deadline = null;
            }
            if (partial > 0 && deadline == null && ctx.channel().isActive()) {
                deadline = ctx.executor().schedule(() -> {
                    if (ctx.channel().isActive()) {
                        counters.dataConnectionTimeouts.increment(DataConnectionTimeout.HEADER);
                        ctx.close();
                    }
                }, headerTimeoutMs, TimeUnit.MILLISECONDS);
            }
        }

        @Override
        protected void handlerRemoved0(ChannelHandlerContext ctx) {
            if (deadline != null) {
                deadline.cancel(false);
                deadline = null;
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            handlerRemoved0(ctx);
            super.channelInactive(ctx);
        }
    }

    /**
     * Answers READ requests of one connection, in order, and drives its reading (issue 33, BND-1): it asks for the
     * next frame only while fewer than {@code readsQueuedMax} answers are unwritten and the channel is writable, so
     * answers never queue faster than the socket drains; otherwise reading pauses (counted by cause) and resumes
     * when an answer is written out or the channel becomes writable again. A MALFORMED frame is answered and the
     * connection closed; no frame behind it is served.
     */
    static final class BlockSender extends SimpleChannelInboundHandler<ByteBuf> {
        /** Chunk of an SSD block read into a buffer under TLS: one TLS record is at most 16 KiB anyway. */
        static final int TLS_FILE_CHUNK_BYTES = 64 << 10;

        private final GrantTable grants;
        private final CountBytesWindow egress;
        /** The NIC's node-wide egress account (issue 39 item 2). */
        private final NicEgress nicEgress;
        private final SourceCounters counters;
        private final int readsQueuedMax;
        /** Answers (refusals or sends) handed to the channel whose write has not completed. */
        private int answersUnwritten;
        /** A frame was asked for (read()) and has not arrived yet. */
        private boolean readRequested;
        /** Reading is paused (counted once per pause). */
        private boolean paused;
        /** A MALFORMED frame was seen: nothing more is read or served. */
        private boolean closing;
        /** A drain task is queued on the event loop. */
        private boolean drainScheduled;
        /** A drain is running: answers are written and flushed together at its end. */
        private boolean draining;

        /** The connection runs TLS: SSD blocks are sent as {@link ChunkedNioFile} chunks, not a file region. */
        private final boolean tls;
        /**
         * The grant this connection is bound to by a BIND with its secret (issue 33); null before the first accepted
         * BIND. A READ of any other grant is refused {@link DataStatus#NOT_BOUND}.
         */
        private UUID bound;

        /** The listener's AUTHORIZE decision, read per frame (installed after the listener bound). */
        private final java.util.function.Supplier<DataAuthorizer> authorizer;
        private final int authorizeBytesMax;

        BlockSender(GrantTable grants, CountBytesWindow egress, NicEgress nicEgress, SourceCounters counters,
                int readsQueuedMax, boolean tls, java.util.function.Supplier<DataAuthorizer> authorizer,
                int authorizeBytesMax) {
            this.authorizer = authorizer;
            this.authorizeBytesMax = authorizeBytesMax;
            this.tls = tls;
            this.nicEgress = nicEgress;
            this.grants = grants;
            this.egress = egress;
            this.counters = counters;
            this.readsQueuedMax = readsQueuedMax;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) throws Exception {
            super.channelActive(ctx);
            requestFrame(ctx);
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            if (ctx.channel().isActive()) { // added by the initializer after the channel became active
                requestFrame(ctx);
            }
        }

        /**
         * Netty 4.2's {@link FlowControlHandler} forgets a {@code read()} that no frame satisfied within one read cycle
         * (it clears its unsatisfied reads at read-complete). Under TLS, handshake and record reads end such cycles
         * without a frame, and the frame then waited in its queue for a read nobody asked again: while a frame is
         * wanted, ask again.
         */
        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
            if (readRequested && !closing && ctx.channel().isActive()) {
                ctx.read();
            }
            super.channelReadComplete(ctx);
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
            if (ctx.channel().isWritable()) {
                requestFrame(ctx);
            }
            super.channelWritabilityChanged(ctx);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof IdleStateEvent) {
                counters.dataConnectionTimeouts.increment(DataConnectionTimeout.IDLE);
                closing = true;
                ctx.close();
                return;
            }
            super.userEventTriggered(ctx, evt);
        }

        /**
         * Schedules a {@link #drain} if the bounds allow reading, else records a pause. The drain runs as a later
         * event-loop task: the flow-control handler delivers a held frame synchronously from read(), and doing that
         * from within channelRead0 or a write completion would recurse once per frame held.
         */
        private void requestFrame(ChannelHandlerContext ctx) {
            if (drainScheduled || readRequested || closing || !ctx.channel().isActive() || !mayRead(ctx)) {
                return;
            }
            drainScheduled = true;
            ctx.executor().execute(() -> drain(ctx));
        }

        /** True while fewer than readsQueuedMax answers are unwritten and the channel is writable; else a pause. */
        private boolean mayRead(ChannelHandlerContext ctx) {
            if (answersUnwritten >= readsQueuedMax) {
                pause(DataReadPause.READS_QUEUED_MAX);
                return false;
            }
            if (!ctx.channel().isWritable()) {
                pause(DataReadPause.NOT_WRITABLE);
                return false;
            }
            paused = false;
            return true;
        }

        /**
         * Serves the frames the flow-control handler holds, one read() each, while the bounds allow (at most
         * readsQueuedMax: each adds an unwritten answer), writing their answers with one flush at the end (one
         * writev for a pipeline). When it holds none, the read() goes to the socket and the next frame arrives
         * through channelRead0 later.
         */
        private void drain(ChannelHandlerContext ctx) {
            drainScheduled = false;
            draining = true;
            try {
                while (!readRequested && !closing && ctx.channel().isActive() && mayRead(ctx)) {
                    readRequested = true;
                    ctx.read(); // a held frame arrives now (channelRead0 clears readRequested)
                }
            } finally {
                draining = false;
                ctx.flush();
            }
        }

        /** Writes one message; flushed now unless a drain flushes its answers together at its end. */
        private ChannelFuture emit(ChannelHandlerContext ctx, Object msg) {
            return draining ? ctx.write(msg) : ctx.writeAndFlush(msg);
        }

        private void pause(DataReadPause cause) {
            if (!paused) {
                paused = true;
                counters.dataReadPauses.increment(cause);
            }
        }

        /** One answer is handed to the channel; its completion frees the slot and may resume reading. */
        private void track(ChannelHandlerContext ctx, ChannelFuture written) {
            answersUnwritten++;
            written.addListener(f -> {
                answersUnwritten--;
                requestFrame(ctx);
            });
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            readRequested = false;
            if (closing) {
                return;
            }
            DataFrames.ReadRequest req;
            try {
                switch (DataFrames.readRequest(frame)) {
                    case DataFrames.ReadRequest r -> req = r;
                    case DataFrames.BindRequest b -> {
                        bind(ctx, b);
                        if (!draining) {
                            requestFrame(ctx);
                        }
                        return;
                    }
                    case DataFrames.AuthorizeHeader a -> {
                        authorize(ctx, a, frame);
                        if (!draining) {
                            requestFrame(ctx);
                        }
                        return;
                    }
                }
            } catch (DataFrames.MalformedFrame e) {
                closing = true; // nothing decoded behind it is served
                refuse(ctx, DataStatus.MALFORMED, 0).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            Channel ch = ctx.channel();
            DataServeEvent served = DataServeEvent.start("READ");
            switch (grants.beginSend(req.grantId(), req.blockIndex(), req.grantId().equals(bound), () -> cut(ch))) {
                case GrantTable.SendStart.Refuse r -> refuse(ctx, r.status(), req.readId());
                case GrantTable.SendStart.Start s -> send(ctx, s, req.readId(), served);
            }
            if (!draining) { // the first frame of a socket read: the drain serves the frames held behind it
                requestFrame(ctx);
            }
        }

        /**
         * A BIND: binds the connection to the grant (replacing an earlier binding), leaves it unbound for a grant the
         * source no longer has, or answers a wrong secret or certificate by name (read id 0) and closes; nothing decoded
         * behind a refused BIND is served.
         */
        private void bind(ChannelHandlerContext ctx, DataFrames.BindRequest b) {
            SslHandler ssl = ctx.pipeline().get(SslHandler.class);
            PeerIdentity.Named peer = ssl == null ? null : PeerIdentity.of(ssl.engine().getSession());
            switch (grants.bind(b.grantId(), b.secret(), peer)) {
                case GrantTable.BindResult.Bound ok -> bound = ok.grantId();
                case GrantTable.BindResult.Unknown u -> bound = null;
                case GrantTable.BindResult.Refused r -> {
                    bound = null;
                    closing = true;
                    refuse(ctx, r.status(), 0).addListener(ChannelFutureListener.CLOSE);
                }
            }
        }

        /**
         * An AUTHORIZE (issue 37 item 5): the gRPC call's decision, answered in request order with the
         * AuthorizeResponse bytes. A granted answer binds the connection to its grant (the requester learned the secret
         * from it); any other answer leaves it unbound. A body beyond {@code authorizeRequestBytesMax} (the decoder
         * passed the header alone) is answered REQUEST_TOO_LARGE and the connection closed: its body was never read.
         * Under TLS a certificate that names no node is answered {@link DataStatus#PEER_IDENTITY_MISMATCH} and closed.
         */
        private void authorize(ChannelHandlerContext ctx, DataFrames.AuthorizeHeader a, ByteBuf body) {
            DataServeEvent served = DataServeEvent.start("AUTHORIZE");
            DataAuthorizer decide = authorizer.get();
            if (decide == null) { // as a source without the frame: refused by name, nothing behind it served
                closing = true;
                refuse(ctx, DataStatus.MALFORMED, a.requestId()).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            Optional<NodeId> peer = Optional.empty();
            SslHandler ssl = ctx.pipeline().get(SslHandler.class);
            if (ssl != null) {
                if (!(PeerIdentity.of(ssl.engine().getSession()) instanceof PeerIdentity.Named.Node n)) {
                    closing = true;
                    refuse(ctx, DataStatus.PEER_IDENTITY_MISMATCH, a.requestId()).addListener(ChannelFutureListener.CLOSE);
                    return;
                }
                peer = Optional.of(n.nodeId());
            }
            boolean whole = a.bodyBytes() >= 0 && a.bodyBytes() <= authorizeBytesMax
                    && body.readableBytes() == a.bodyBytes();
            AuthorizeResponse answer = decide.authorize(whole ? parse(body)
                    : new BoundedMessage.Oversized<>(Integer.toUnsignedLong(a.bodyBytes()), authorizeBytesMax), peer);
            counters.dataAuthorizes.incrementAndGet();
            bound = answer.hasAuthorized() && answer.getAuthorized().hasGrantId()
                    ? new UUID(answer.getAuthorized().getGrantId().getMsb(), answer.getAuthorized().getGrantId().getLsb())
                    : null;
            byte[] bytes = answer.toByteArray();
            java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
            crc.update(bytes);
            ByteBuf header = ctx.alloc().buffer(DataFrames.RESPONSE_HEADER_BYTES);
            DataFrames.writeResponseHeader(header, DataStatus.OK, a.requestId(), bytes.length, (int) crc.getValue());
            ctx.write(header, ctx.voidPromise());
            if (served != null) {
                served.handedOut(bytes.length);
            }
            ChannelFuture written = emit(ctx, Unpooled.wrappedBuffer(bytes));
            track(ctx, written);
            if (served != null) {
                written.addListener(f -> served.written(f.isSuccess()));
            }
            if (!whole) {
                closing = true; // the body was not read: the stream has no framing left
                written.addListener(ChannelFutureListener.CLOSE);
            }
        }

        private static BoundedMessage<AuthorizeRequest> parse(ByteBuf body) {
            try {
                return new BoundedMessage.Parsed<>(AuthorizeRequest.parseFrom(body.nioBuffer()));
            } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                return new BoundedMessage.Unparseable<>(String.valueOf(e.getMessage()));
            }
        }

        /** Sends a granted block; {@code served} is its flight-recorder event, null when none is recording. */
        private void send(ChannelHandlerContext ctx, GrantTable.SendStart.Start s, long readId, DataServeEvent served) {
            long length = s.pin().sizeBytes();
            if (egress.tryAdd(1, length) != CountBytesWindow.Full.NONE) {
                grants.abortSend(s);
                refuse(ctx, DataStatus.EGRESS_LIMIT, readId);
                return;
            }
            // issue 39 item 2: the node-wide account of this NIC's egress, returned only at the send's physical end
            if (!(nicEgress.charge(length) instanceof EgressAccount.Charge.Held nic)) {
                egress.release(1, length);
                grants.abortSend(s);
                refuse(ctx, DataStatus.EGRESS_LIMIT, DataRefusal.EGRESS_NIC_WINDOW, readId);
                return;
            }
            Object payload;
            try {
                payload = payload(s.pin().location(), length, tls);
            } catch (IOException | RuntimeException e) {
                nic.complete(); // nothing of it reached the socket: terminal
                egress.release(1, length);
                grants.abortSend(s);
                refuse(ctx, DataStatus.SOURCE_READ_ERROR, readId);
                return;
            }
            ByteBuf header = ctx.alloc().buffer(DataFrames.RESPONSE_HEADER_BYTES);
            DataFrames.writeResponseHeader(header, DataStatus.OK, readId, length, s.pin().crc32c());
            ctx.write(header, ctx.voidPromise());
            PeerRouteClass route = PeerRouteClass.of(s.pin().medium());
            if (served != null) {
                served.handedOut(length);
            }
            ChannelFuture written = emit(ctx, payload);
            track(ctx, written);
            written.addListener((ChannelFutureListener) f -> {
                if (served != null) {
                    served.written(f.isSuccess());
                }
                nic.complete(); // written out or failed: the physical end of the send
                egress.release(1, length);
                grants.endSend(s); // the pin outlives the bytes on the wire (DRAINING)
                if (f.isSuccess()) {
                    counters.readsServed.increment(route);
                    counters.bytesServed.add(route, length);
                } else {
                    f.channel().close();
                }
            });
        }

        /**
         * Closes {@code ch} on its own event loop, always later than now: the caller holds the grant table's lock,
         * and closing inline would run the failed write's completion (endSend) in the middle of the table's update.
         */
        private static void cut(Channel ch) {
            try {
                ch.eventLoop().execute(ch::close);
            } catch (RejectedExecutionException stopping) {
                // The event loop is shutting down; it closes its channels itself, failing their writes.
            }
        }

        private static Object payload(PayloadLocation location, long length, boolean tls) throws IOException {
            return switch (location) {
                case PayloadLocation.InArena a -> {
                    if (a.bytes().byteSize() != length) {
                        throw new IOException("arena segment of " + a.bytes().byteSize() + " bytes for a block of " + length);
                    }
                    // A read-only direct buffer over the pinned arena bytes; Netty wraps it without copying.
                    yield Unpooled.wrappedBuffer(a.bytes().asByteBuffer());
                }
                case PayloadLocation.InFile f -> {
                    FileChannel ch = FileChannel.open(f.file(), StandardOpenOption.READ);
                    if (ch.size() < f.offset() + length) {
                        long size = ch.size();
                        ch.close();
                        throw new IOException(f.file() + " has " + size + " bytes, the block needs " + (f.offset() + length));
                    }
                    yield tls ? new ChunkedNioFile(ch, f.offset(), length, TLS_FILE_CHUNK_BYTES) // closed at its end
                            : new DefaultFileRegion(ch, f.offset(), length); // closes the channel when released
                }
            };
        }

        private ChannelFuture refuse(ChannelHandlerContext ctx, DataStatus status, long readId) {
            return refuse(ctx, status, status.refusal(), readId);
        }

        /** Answers {@code status} on the wire and counts {@code counted} (a finer name than the wire's status). */
        private ChannelFuture refuse(ChannelHandlerContext ctx, DataStatus status, DataRefusal counted, long readId) {
            counters.dataRefusals.increment(counted);
            ByteBuf header = ctx.alloc().buffer(DataFrames.RESPONSE_HEADER_BYTES);
            DataFrames.writeResponseHeader(header, status, readId, 0, 0);
            ChannelFuture written = emit(ctx, header);
            track(ctx, written);
            return written;
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            closing = true;
            ctx.close();
        }
    }
}
