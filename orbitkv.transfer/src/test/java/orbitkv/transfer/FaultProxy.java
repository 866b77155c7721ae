package orbitkv.transfer;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import orbitkv.membership.Endpoint;
import orbitkv.transfer.frame.DataFrames;

/**
 * A fault-injecting TCP proxy on loopback between a requester and a source's data listener (the TCP side of the
 * suite's fault decorator). Requests pass unchanged; the next response after {@link #arm} gets the fault:
 * DELAY holds the whole response (and any pipelined behind it) for a while, CUT forwards the header and half the
 * payload then closes both connections, STALL forwards the same and then nothing more on that connection (later
 * pipelined responses included), CORRUPT flips the payload byte in the middle, FORGE (armed by {@link #forge})
 * collects the whole response, header and payload, and forwards what its rewrite returns instead.
 * It follows the response framing (32-byte header, u64 length at offset 16) to find payload bytes.
 */
public final class FaultProxy implements AutoCloseable {
    public enum Fault {
        NONE,
        DELAY,
        CUT,
        STALL,
        CORRUPT,
        FORGE
    }

    private final EventLoopGroup group;
    private final NativeIo io;
    private final Channel server;
    private volatile InetSocketAddress target;
    private volatile Fault armed = Fault.NONE;
    private volatile Duration delay = Duration.ZERO;
    private volatile java.util.function.UnaryOperator<byte[]> rewrite = b -> b;
    /** While true every response byte on every connection is held (in order) until {@link #releaseAll}. */
    private volatile boolean holdingAll;
    private final java.util.Set<Downstream> downstreams = java.util.concurrent.ConcurrentHashMap.newKeySet();

    public FaultProxy(EventLoopGroup group, NativeIo io) {
        this.group = group;
        this.io = io;
        this.server = new ServerBootstrap().group(group).channel(io.serverChannel())
                .childOption(ChannelOption.AUTO_READ, false)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel requester) {
                        requester.pipeline().addLast(new Upstream(requester));
                    }
                }).bind("127.0.0.1", 0).syncUninterruptibly().channel();
    }

    public Endpoint endpoint() {
        return new Endpoint("127.0.0.1", ((InetSocketAddress) server.localAddress()).getPort());
    }

    public void target(InetSocketAddress address) {
        this.target = address;
    }

    /** The next response gets {@code fault}; {@code d} is DELAY's hold time. */
    public void arm(Fault fault, Duration d) {
        this.delay = d;
        this.armed = fault;
    }

    /**
     * The next response is collected whole (its 32-byte header and its payload) and {@code rewrite}'s bytes are
     * forwarded in its place: a source's answer forged byte for byte (the proxy keeps following the true framing).
     */
    public void forge(java.util.function.UnaryOperator<byte[]> rewrite) {
        this.rewrite = rewrite;
        this.armed = Fault.FORGE;
    }

    /** Holds every response on every connection, open or opened later, until {@link #releaseAll}. */
    public void holdAll() {
        holdingAll = true;
    }

    /** Forwards what {@link #holdAll} held, in order, and stops holding. */
    public void releaseAll() {
        holdingAll = false;
        for (Downstream d : downstreams) {
            d.loop.execute(d::flushHeld);
        }
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
    }

    /** Requester -> source: opens the source connection, then relays unchanged. */
    private final class Upstream extends ChannelInboundHandlerAdapter {
        private final Channel requester;
        private Channel source;

        Upstream(Channel requester) {
            this.requester = requester;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ChannelFuture f = new Bootstrap().group(group).channel(io.socketChannel())
                    .handler(new Downstream(requester)).connect(target);
            source = f.channel();
            f.addListener(done -> {
                if (done.isSuccess()) {
                    requester.config().setAutoRead(true);
                    requester.read();
                } else {
                    requester.close();
                }
            });
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            source.writeAndFlush(msg);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            source.close();
        }
    }

    /** Source -> requester: follows the response framing and applies the armed fault to one response. */
    private final class Downstream extends ChannelInboundHandlerAdapter {
        private final Channel requester;
        private final byte[] header = new byte[DataFrames.RESPONSE_HEADER_BYTES];
        private int headerFill;
        private long payloadLeft;
        private long payloadLength;
        private Fault fault = Fault.NONE;
        /** The response FORGE collects, forwarded rewritten once complete. */
        private final java.io.ByteArrayOutputStream forging = new java.io.ByteArrayOutputStream();
        private boolean holding;
        private final List<ByteBuf> held = new ArrayList<>();
        private boolean stalled;
        /** A CUT reached while responses are held: the connections close once the held bytes went out. */
        private boolean cutAfterHeld;
        private Channel sourceSide;

        /** The source-side channel's event loop: reads, held bytes and their release all run on it. */
        private io.netty.util.concurrent.EventExecutor loop;

        Downstream(Channel requester) {
            this.requester = requester;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            loop = ctx.executor();
            sourceSide = ctx.channel();
            downstreams.add(this);
            requester.closeFuture().addListener(f -> downstreams.remove(this));
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            try {
                while (in.isReadable()) {
                    if (headerFill < header.length) {
                        if (headerFill == 0) {
                            startResponse(ctx);
                        }
                        int n = Math.min(in.readableBytes(), header.length - headerFill);
                        in.getBytes(in.readerIndex(), header, headerFill, n);
                        headerFill += n;
                        emit(in.readRetainedSlice(n));
                        if (headerFill == header.length) {
                            payloadLength = java.nio.ByteBuffer.wrap(header).getLong(16);
                            payloadLeft = payloadLength;
                            if (payloadLeft == 0) {
                                responseEnded();
                            }
                        }
                    } else {
                        int n = (int) Math.min(in.readableBytes(), payloadLeft);
                        long at = payloadLength - payloadLeft; // payload offset of the first byte
                        long half = payloadLength / 2;
                        if ((fault == Fault.CUT || fault == Fault.STALL) && at + n > half) {
                            int keep = (int) Math.max(0, half - at);
                            forward(in.readRetainedSlice(keep));
                            in.skipBytes(n - keep);
                            payloadLeft -= n;
                            if (fault == Fault.CUT && (holding || holdingAll)) {
                                cutAfterHeld = true; // the cut keeps its place in the held stream
                                stalled = true;
                                return;
                            }
                            if (fault == Fault.CUT) {
                                requester.close();
                                ctx.close();
                                return;
                            }
                            stalled = true;
                        } else {
                            ByteBuf slice = in.readRetainedSlice(n);
                            if (fault == Fault.CORRUPT && at <= half && half < at + n) {
                                int i = (int) (half - at);
                                ByteBuf copy = slice.copy();
                                slice.release();
                                slice = copy;
                                slice.setByte(i, slice.getByte(i) ^ 0x5A);
                                fault = Fault.NONE;
                            }
                            emit(slice);
                            payloadLeft -= n;
                        }
                        if (payloadLeft == 0) {
                            responseEnded();
                        }
                    }
                }
            } finally {
                in.release();
            }
        }

        /** Bytes of the current response: collected while FORGE is on, else forwarded. */
        private void emit(ByteBuf b) {
            if (fault != Fault.FORGE) {
                forward(b);
                return;
            }
            try {
                b.readBytes(forging, b.readableBytes());
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            } finally {
                b.release();
            }
        }

        private void responseEnded() {
            headerFill = 0;
            if (fault == Fault.FORGE) {
                fault = Fault.NONE;
                byte[] whole = forging.toByteArray();
                forging.reset();
                forward(Unpooled.wrappedBuffer(rewrite.apply(whole)));
            }
        }

        private void startResponse(ChannelHandlerContext ctx) {
            fault = armed;
            armed = Fault.NONE;
            if (fault == Fault.DELAY) {
                holding = true;
                loop.schedule(() -> {
                    holding = false;
                    flushHeld();
                }, delay.toNanos(), TimeUnit.NANOSECONDS);
            }
        }

        /** On {@link #loop}, as everything that touches {@code held}. */
        private void forward(ByteBuf b) {
            if (stalled) {
                b.release();
            } else if (holding || holdingAll) {
                held.add(b);
            } else {
                flushHeld();
                requester.writeAndFlush(b);
            }
        }

        private void flushHeld() {
            if (holding || holdingAll || held.isEmpty()) {
                return;
            }
            for (ByteBuf b : held) {
                requester.write(b);
            }
            held.clear();
            requester.flush();
            if (cutAfterHeld) {
                requester.close();
                sourceSide.close();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            requester.close();
        }
    }
}
