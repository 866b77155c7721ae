package orbitkv.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/** The raw-bytes end of a connection, in front of the HTTP decoder (see {@link HttpApiHandler#onRawBytes}). */
final class RawBytes extends ChannelInboundHandlerAdapter {
    private final HttpApiHandler handler;

    RawBytes(HttpApiHandler handler) {
        this.handler = handler;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf bytes && !handler.onRawBytes(bytes)) {
            bytes.release();
            return;
        }
        ctx.fireChannelRead(msg);
    }
}
