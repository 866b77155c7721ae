package orbitkv.transfer.source;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.FixedLengthFrameDecoder;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.stream.ChunkedNioFile;
import io.netty.handler.stream.ChunkedWriteHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.UUID;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.PeerIdentity;
import orbitkv.transfer.PayloadSource.PayloadLocation;
import orbitkv.transfer.RouteClass;
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
 * <p>With TLS (issue 33: the Manager's peer mutual-TLS files) an {@link SslHandler} heads each connection and
 * requires a client certificate signed by the cluster CA; a plaintext client fails the handshake and is closed, and
 * a BIND binds a grant only from the certificate of the grant's requester. A file region cannot pass through
 * {@link SslHandler}, so SSD blocks are then read in {@link ChunkedNioFile} chunks; the arena buffer is encrypted
 * from the pinned segment as is.
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
    private final Channel server;
    private final ChannelGroup children = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);

    private DataListener(Channel server) {
        this.server = server;
    }

    static DataListener bind(InetSocketAddress address, EventLoopGroup group, Class<? extends ServerChannel> channelType,
            GrantTable grants, CountBytesWindow egress, SourceCounters counters, SslContext tls) throws IOException {
        DataListener[] self = new DataListener[1];
        ServerBootstrap b = new ServerBootstrap().group(group).channel(channelType)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        self[0].children.add(ch);
                        counters.dataConnections.incrementAndGet();
                        ch.closeFuture().addListener(f -> counters.dataConnections.decrementAndGet());
                        if (tls != null) { // issue 33: TLS first; a plaintext client fails the handshake and is closed
                            ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                        }
                        // Pipelined requests decoded from one socket read are answered with one flush (one writev).
                        ch.pipeline().addLast(new FlushConsolidationHandler(
                                        FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, false));
                        if (tls != null) { // file regions cannot pass SslHandler: SSD blocks go as chunks
                            ch.pipeline().addLast(new ChunkedWriteHandler());
                        }
                        ch.pipeline().addLast(new FixedLengthFrameDecoder(DataFrames.REQUEST_BYTES),
                                new BlockSender(grants, egress, counters, tls != null));
                    }
                });
        ChannelFuture bound = b.bind(address).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            throw new IOException("cannot bind the transfer data listener to " + address, bound.cause());
        }
        self[0] = new DataListener(bound.channel());
        return self[0];
    }

    InetSocketAddress boundAddress() {
        return (InetSocketAddress) server.localAddress();
    }

    @Override
    public void close() {
        server.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        children.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /**
     * Answers READ requests of one connection, in order. A READ is served only for the grant the connection is bound
     * to by a BIND carrying the grant's secret (and, under TLS, from the certificate of the grant's requester).
     */
    static final class BlockSender extends SimpleChannelInboundHandler<ByteBuf> {
        /** Chunk of an SSD block read into a buffer under TLS: one TLS record is at most 16 KiB anyway. */
        static final int TLS_FILE_CHUNK_BYTES = 64 << 10;

        private final GrantTable grants;
        private final CountBytesWindow egress;
        private final SourceCounters counters;
        /** The connection runs TLS: SSD blocks are sent as {@link ChunkedNioFile} chunks, not a file region. */
        private final boolean tls;
        /** The grant this connection is bound to; null before the first accepted BIND. */
        private UUID bound;
        /** Set once a BIND was refused: the connection is closing and nothing decoded after it is served. */
        private boolean refused;

        BlockSender(GrantTable grants, CountBytesWindow egress, SourceCounters counters, boolean tls) {
            this.tls = tls;
            this.grants = grants;
            this.egress = egress;
            this.counters = counters;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            if (refused) {
                return;
            }
            DataFrames.ReadRequest req;
            try {
                switch (DataFrames.readRequest(frame)) {
                    case DataFrames.ReadRequest r -> req = r;
                    case DataFrames.BindRequest b -> {
                        bind(ctx, b);
                        return;
                    }
                }
            } catch (DataFrames.MalformedFrame e) {
                refuse(ctx, DataStatus.MALFORMED, 0).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            Channel ch = ctx.channel();
            switch (grants.beginSend(req.grantId(), req.blockIndex(), req.grantId().equals(bound), () -> cut(ch))) {
                case GrantTable.SendStart.Refuse r -> refuse(ctx, r.status(), req.readId());
                case GrantTable.SendStart.Start s -> send(ctx, s, req.readId());
            }
        }

        /**
         * A BIND: binds the connection to the grant (replacing an earlier binding), leaves it unbound for a grant the
         * source no longer has, or answers a wrong secret or certificate by name (read id 0) and closes.
         */
        private void bind(ChannelHandlerContext ctx, DataFrames.BindRequest b) {
            SslHandler tls = ctx.pipeline().get(SslHandler.class);
            PeerIdentity.Named peer = tls == null ? null : PeerIdentity.of(tls.engine().getSession());
            switch (grants.bind(b.grantId(), b.secret(), peer)) {
                case GrantTable.BindResult.Bound ok -> bound = ok.grantId();
                case GrantTable.BindResult.Unknown u -> bound = null;
                case GrantTable.BindResult.Refused r -> {
                    bound = null;
                    refused = true;
                    refuse(ctx, r.status(), 0).addListener(ChannelFutureListener.CLOSE);
                }
            }
        }

        private void send(ChannelHandlerContext ctx, GrantTable.SendStart.Start s, long readId) {
            long length = s.pin().sizeBytes();
            if (egress.tryAdd(1, length) != CountBytesWindow.Full.NONE) {
                grants.abortSend(s);
                refuse(ctx, DataStatus.EGRESS_LIMIT, readId);
                return;
            }
            Object payload;
            try {
                payload = payload(s.pin().location(), length, tls);
            } catch (IOException | RuntimeException e) {
                egress.release(1, length);
                grants.abortSend(s);
                refuse(ctx, DataStatus.SOURCE_READ_ERROR, readId);
                return;
            }
            ByteBuf header = ctx.alloc().buffer(DataFrames.RESPONSE_HEADER_BYTES);
            DataFrames.writeResponseHeader(header, DataStatus.OK, readId, length, s.pin().crc32c());
            ctx.write(header, ctx.voidPromise());
            RouteClass route = RouteClass.of(s.pin().medium());
            ctx.writeAndFlush(payload).addListener((ChannelFutureListener) f -> {
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
            counters.dataRefusals.increment(status.refusal());
            ByteBuf header = ctx.alloc().buffer(DataFrames.RESPONSE_HEADER_BYTES);
            DataFrames.writeResponseHeader(header, status, readId, 0, 0);
            return ctx.writeAndFlush(header);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
