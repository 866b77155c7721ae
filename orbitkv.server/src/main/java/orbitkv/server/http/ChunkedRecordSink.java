package orbitkv.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.concurrent.CompletableFuture;
import orbitkv.server.restore.StreamedRestore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A streamed answer's records as HTTP chunks on one connection (issue 35 item 4). Writability backpressure: while the
 * channel is not writable (Netty's outbound buffer above its high-water mark) the writer waits for its previous chunk
 * to be written before it queues the next, so the outbound buffer holds at most what the restore memory budget
 * already admitted. A closed channel fails the write at once and frees the record.
 */
final class ChunkedRecordSink implements StreamedRestore.RecordSink {
    private static final Logger LOG = LoggerFactory.getLogger(ChunkedRecordSink.class);

    private final ChannelHandlerContext ctx;
    private ChannelFuture last;

    ChunkedRecordSink(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public CompletableFuture<Void> write(ByteBuf record) throws InterruptedException {
        Channel ch = ctx.channel();
        try {
            while (last != null && !last.isDone() && !ch.isWritable() && ch.isActive()) {
                last.await(1_000); // bounded wake-ups: a write that never ends is a cut the channel reports
            }
        } catch (InterruptedException e) {
            record.release();
            throw e;
        }
        CompletableFuture<Void> written = new CompletableFuture<>();
        ChannelFuture f = ctx.writeAndFlush(new DefaultHttpContent(record));
        f.addListener(x -> {
            if (x.isSuccess()) {
                written.complete(null);
            } else {
                written.completeExceptionally(x.cause());
            }
        });
        last = f;
        return written;
    }

    /**
     * Writes a streamed answer on the calling (request) thread: the head with chunked transfer encoding, each record
     * as a chunk when the body writes it, then the last chunk, after which {@code ended} runs as a whole answer's
     * listener would. A cut or a failure sends no last chunk (and the body no end record): {@code cut} then runs on
     * the event loop after the chunks already queued, so the client reads those and then sees the connection close.
     */
    static void answer(ChannelHandlerContext ctx, ApiResponse response, boolean keepAlive, String path,
            ChannelFutureListener ended, Runnable cut) {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(response.status()));
        head.headers().set(HttpHeaderNames.CONTENT_TYPE, response.contentType());
        response.headers().forEach((k, v) -> head.headers().set(k, v));
        HttpUtil.setTransferEncodingChunked(head, true);
        HttpUtil.setKeepAlive(head, keepAlive);
        ctx.writeAndFlush(head);
        boolean whole = false;
        try {
            whole = response.streamed().writeTo(new ChunkedRecordSink(ctx));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            LOG.error("{} failed while streaming", path, e);
        }
        if (whole) {
            ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(ended);
        } else {
            ctx.executor().execute(cut);
        }
    }
}
