package orbitkv.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import orbitkv.inventory.Namespace;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection of the HTTP API: routing (404/405), content types (415), size limits from Content-Length
 * and while streaming, before anything is aggregated (413, BND-1), admission against the in-flight bound
 * (429), then execution of {@link CacheApi} off the event loop. Reading pauses while a request executes,
 * so a connection holds at most one buffered request. An error answered before the body ended closes the
 * connection (the rest of the body is never read). A refused request changes no state.
 */
final class HttpApiHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(HttpApiHandler.class);
    static final int OWNERS_LIMIT_DEFAULT = 100;
    static final int OWNERS_LIMIT_MAX = 1000;

    private final CacheApi api;
    private final ApiMetrics metrics;
    private final HttpLimits limits;
    private final Admission admission;
    private final Executor executor;

    /** The request being received; null between requests. */
    private Request current;
    /** After an early error: drop content until the connection closes. */
    private boolean discarding;

    /** What every connection's handler shares once the API serves. */
    record Wiring(CacheApi api, ApiMetrics metrics) {}

    HttpApiHandler(CacheApi api, ApiMetrics metrics, HttpLimits limits, Admission admission, Executor executor) {
        this.api = api;
        this.metrics = metrics;
        this.limits = limits;
        this.admission = admission;
        this.executor = executor;
    }

    /** The in-flight bound shared by all connections, and the shutdown switch. */
    interface Admission {
        /** False when the bound is reached. */
        boolean tryAcquire();

        void release();

        boolean accepting();
    }

    /** A request being received. */
    private static final class Request {
        final Endpoint endpoint;
        final boolean keepAlive;
        final QueryStringDecoder uri;
        final Namespace saveNamespace;
        /** A save streaming into DRAM reservations; aborted wherever the request is dropped before its commit. */
        final CacheApi.SaveStream save;
        final CompositeByteBuf bytes;
        long received;
        boolean permit = true;

        Request(Endpoint endpoint, boolean keepAlive, QueryStringDecoder uri, Namespace saveNamespace,
                CacheApi.SaveStream save, CompositeByteBuf bytes) {
            this.endpoint = endpoint;
            this.keepAlive = keepAlive;
            this.uri = uri;
            this.saveNamespace = saveNamespace;
            this.save = save;
            this.bytes = bytes;
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (discarding) {
                return;
            }
            if (msg instanceof HttpRequest req) {
                onRequest(ctx, req);
            }
            if (msg instanceof HttpContent content && current != null) {
                onContent(ctx, content);
            }
        } catch (ApiException e) {
            failEarly(ctx, e);
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void onRequest(ChannelHandlerContext ctx, HttpRequest req) {
        if (req.decoderResult().isFailure()) {
            throw new ApiException(ApiError.MALFORMED_HTTP, "the request line or headers are malformed");
        }
        QueryStringDecoder uri = new QueryStringDecoder(req.uri());
        Endpoint endpoint = Endpoint.byPath(uri.path());
        if (endpoint == null) {
            throw new ApiException(ApiError.UNKNOWN_PATH, "no endpoint at " + JsonRequests.clip(uri.path()));
        }
        if (!endpoint.method.equals(req.method())) {
            throw new ApiException(ApiError.METHOD_NOT_ALLOWED, endpoint.path + " accepts " + endpoint.method.name()
                    + ", got " + JsonRequests.clip(req.method().name()));
        }
        long bodyMax = switch (endpoint.body) {
            case BLOCKS -> limits.saveBodyBytesMax();
            case JSON -> limits.jsonBodyBytesMax();
            case EMPTY -> 0;
        };
        checkContentType(endpoint, req.headers().get(HttpHeaderNames.CONTENT_TYPE));
        long declared = HttpUtil.getContentLength(req, -1L);
        if (declared > bodyMax) {
            throw endpoint.body == Endpoint.Body.EMPTY
                    ? new ApiException(ApiError.UNEXPECTED_BODY, endpoint.path + " takes no body, Content-Length is " + declared)
                    : new ApiException(ApiError.BODY_TOO_LARGE, "Content-Length " + declared + " exceeds the bound of "
                            + bodyMax + " bytes for " + endpoint.path);
        }
        Namespace saveNamespace = endpoint == Endpoint.SAVE
                ? JsonRequests.namespaceParameter(uri.parameters().get("namespace")) : null;
        if (!admission.accepting()) {
            throw new ApiException(ApiError.SHUTTING_DOWN, "the Manager is shutting down");
        }
        if (!admission.tryAcquire()) {
            throw new ApiException(ApiError.TOO_MANY_REQUESTS_IN_FLIGHT, "more than " + limits.requestsInFlightMax()
                    + " requests are in flight");
        }
        current = new Request(endpoint, HttpUtil.isKeepAlive(req), uri, saveNamespace,
                endpoint.body == Endpoint.Body.BLOCKS
                        ? api.beginSave(saveNamespace, limits.saveBodyBytesMax(), limits.blockBytesMax()) : null,
                endpoint.body == Endpoint.Body.JSON ? ctx.alloc().compositeBuffer() : null);
        if (HttpUtil.is100ContinueExpected(req)) {
            ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
        }
    }

    private void onContent(ChannelHandlerContext ctx, HttpContent content) {
        Request r = current;
        ByteBuf chunk = content.content();
        int n = chunk.readableBytes();
        switch (r.endpoint.body) {
            case BLOCKS -> {
                if (content.decoderResult().isFailure()) { // e.g. an invalid chunk-size line: never commit what came before
                    throw new ApiException(ApiError.MALFORMED_HTTP, "the save body's transfer encoding is malformed: "
                            + content.decoderResult().cause().getMessage() + "; nothing of this save is stored");
                }
                r.save.feed(chunk);
            }
            case JSON -> {
                if (r.received + n > limits.jsonBodyBytesMax()) {
                    throw new ApiException(ApiError.BODY_TOO_LARGE, "body exceeds the bound of "
                            + limits.jsonBodyBytesMax() + " bytes for " + r.endpoint.path);
                }
                r.bytes.addComponent(true, chunk.retain());
            }
            case EMPTY -> {
                if (n > 0) {
                    throw new ApiException(ApiError.UNEXPECTED_BODY, r.endpoint.path + " takes no body");
                }
            }
        }
        r.received += n;
        if (content instanceof LastHttpContent) {
            current = null;
            dispatch(ctx, r);
        }
    }

    private void dispatch(ChannelHandlerContext ctx, Request r) {
        ctx.channel().config().setAutoRead(false);
        try {
            executor.execute(() -> execute(ctx, r));
        } catch (RejectedExecutionException e) {
            abortSave(r);
            release(r);
            respond(ctx, r, CacheApi.error(new ApiException(ApiError.SHUTTING_DOWN, "the Manager is shutting down")), false);
        }
    }

    private void execute(ChannelHandlerContext ctx, Request r) {
        ApiResponse response;
        try {
            response = handle(ctx, r);
        } catch (ApiException e) {
            metrics.error(e.error());
            response = CacheApi.error(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            response = CacheApi.error(new ApiException(ApiError.SHUTTING_DOWN, "interrupted by shutdown"));
        } catch (RuntimeException e) {
            LOG.error("{} failed", r.endpoint.path, e);
            metrics.error(ApiError.INTERNAL);
            response = CacheApi.error(new ApiException(ApiError.INTERNAL, "internal error: " + e.getClass().getSimpleName()));
        } finally {
            if (r.bytes != null) {
                r.bytes.release();
            }
            abortSave(r); // a no-op after the save committed
        }
        respond(ctx, r, response, r.keepAlive);
    }

    private ApiResponse handle(ChannelHandlerContext ctx, Request r) throws InterruptedException {
        return switch (r.endpoint) {
            case SAVE -> api.save(r.save);
            case QUERY -> api.query(ByteBufUtil.getBytes(r.bytes));
            case RESTORE -> api.restore(ByteBufUtil.getBytes(r.bytes), ctx.alloc());
            case EVICT -> api.evict(ByteBufUtil.getBytes(r.bytes));
            case SYNC -> api.sync();
            case AWAIT -> api.await(ByteBufUtil.getBytes(r.bytes), limits.awaitTimeoutMsMax());
            case STATUS -> api.status(ownersLimit(r.uri.parameters().get("owners_limit")),
                    single(r.uri.parameters().get("owners_page_token"), "owners_page_token"));
            case METRICS -> api.metrics();
            case HEALTH -> api.health();
        };
    }

    private void respond(ChannelHandlerContext ctx, Request r, ApiResponse response, boolean keepAlive) {
        FullHttpResponse http = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.valueOf(response.status()), response.body());
        http.headers().set(HttpHeaderNames.CONTENT_TYPE, response.contentType());
        http.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, response.body().readableBytes());
        response.headers().forEach((k, v) -> http.headers().set(k, v));
        if (response.status() == 405 && r != null) {
            http.headers().set(HttpHeaderNames.ALLOW, r.endpoint.method.name());
        }
        HttpUtil.setKeepAlive(http, keepAlive);
        if (r != null) {
            metrics.answered(r.endpoint.label, response.status());
        }
        ctx.writeAndFlush(http).addListener((ChannelFutureListener) f -> {
            if (r != null) {
                release(r);
            }
            if (!keepAlive || !f.isSuccess()) {
                f.channel().close();
            } else {
                f.channel().config().setAutoRead(true);
                f.channel().read();
            }
        });
    }

    /** An error before the body ended: answer, stop reading and close after the answer is written. */
    private void failEarly(ChannelHandlerContext ctx, ApiException e) {
        Request r = current;
        current = null;
        discarding = true;
        metrics.error(e.error());
        if (r != null) {
            if (r.bytes != null) {
                r.bytes.release();
            }
            abortSave(r);
        }
        ApiResponse response = CacheApi.error(e);
        FullHttpResponse http = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.valueOf(response.status()), response.body());
        http.headers().set(HttpHeaderNames.CONTENT_TYPE, response.contentType());
        http.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, response.body().readableBytes());
        http.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        metrics.answered(r != null ? r.endpoint.label : "none", response.status());
        ctx.writeAndFlush(http).addListener((ChannelFutureListener) f -> {
            if (r != null) {
                release(r);
            }
            f.channel().close();
        });
    }

    /** Frees a save's DRAM reservations: a dropped, refused or malformed save stores nothing (issue 20 item 3). */
    private static void abortSave(Request r) {
        if (r.save != null) {
            r.save.abort();
        }
    }

    private void release(Request r) {
        if (r.permit) {
            r.permit = false;
            admission.release();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        Request r = current;
        current = null;
        if (r != null) {
            if (r.bytes != null) {
                r.bytes.release();
            }
            abortSave(r);
            release(r);
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.debug("HTTP connection {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }

    private static void checkContentType(Endpoint endpoint, String header) {
        if (endpoint.body == Endpoint.Body.EMPTY) {
            return;
        }
        String expected = endpoint.body == Endpoint.Body.BLOCKS ? BlockFraming.CONTENT_TYPE : "application/json";
        if (header == null) {
            throw new ApiException(ApiError.UNSUPPORTED_CONTENT_TYPE, endpoint.path + " needs Content-Type " + expected);
        }
        String[] parts = header.split(";");
        String media = parts[0].strip().toLowerCase(Locale.ROOT);
        if (!media.equals(expected)) {
            throw new ApiException(ApiError.UNSUPPORTED_CONTENT_TYPE, endpoint.path + " needs Content-Type " + expected
                    + ", got " + JsonRequests.clip(header));
        }
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i].strip().toLowerCase(Locale.ROOT).replace("\"", "");
            if (p.startsWith("charset=") && !p.equals("charset=utf-8")) {
                throw new ApiException(ApiError.UNSUPPORTED_CONTENT_TYPE, endpoint.path + " accepts UTF-8 only, got "
                        + JsonRequests.clip(header));
            }
        }
    }

    private static int ownersLimit(List<String> values) {
        String v = single(values, "owners_limit");
        if (v == null) {
            return OWNERS_LIMIT_DEFAULT;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= 1 && n <= OWNERS_LIMIT_MAX) {
                return n;
            }
        } catch (NumberFormatException e) {
            // fall through to the refusal
        }
        throw new ApiException(ApiError.INVALID_QUERY_PARAMETER, "owners_limit must be an integer 1.." + OWNERS_LIMIT_MAX
                + ", got " + JsonRequests.clip(v));
    }

    private static String single(List<String> values, String name) {
        if (values == null || values.isEmpty()) {
            return null;
        }
        if (values.size() > 1) {
            throw new ApiException(ApiError.INVALID_QUERY_PARAMETER, name + " is given " + values.size() + " times");
        }
        return values.getFirst();
    }
}
