package orbitkv.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.Locale;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import orbitkv.inventory.Namespace;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import orbitkv.server.api.ApiError;
import orbitkv.server.api.ApiException;
import orbitkv.server.api.JsonRequests;

/**
 * One connection of the HTTP API. Reading is manual ({@code AUTO_READ} off): the handler asks for bytes only
 * while it can use them, so a connection executes one request at a time and answers pipelined requests in
 * order; requests decoded ahead of the executing one wait in a queue bounded by
 * {@code --http-pipelined-requests-max} (beyond: 429 {@code TOO_MANY_PIPELINED_REQUESTS}, then close).
 *
 * <p>Per request, in this order: decoder failures (400 {@code MALFORMED_HTTP}: bad request line, headers or
 * transfer encoding, never a body end), the strict request target (400), routing (404/405), the bearer token
 * of mutating endpoints (401), content type (415), {@code Content-Length} against the body bound (413),
 * shutdown (503), a slot (429; /health and /metrics have their own), the body bytes budget for the declared
 * length (429), then the body is streamed with bounds (BND-1) and the request executes off the event loop.
 * A refused request changes no state.
 *
 * <p>Deadlines ({@link ConnectionState}): headers within {@code headerMs} of their first byte, body progress
 * per window (408 and close), idle keep-alive connections closed. An answer given before the request body
 * ended carries {@code Connection: close}; the rest of the body is read and discarded within the linger bounds
 * (so clients that write a whole body before reading still receive it), then the connection closes. An answer
 * whose pending bytes make no progress into the socket for {@code writeStallMs} (the client stopped reading)
 * closes the connection ({@code write_stall}): the write fails, so the request's slot and restore budget return
 * instead of waiting on a reader that never comes (BND-1, INV-9). The first cause of a close is the one counted.
 * Every close is counted by cause ({@code orbitkv_http_connections_closed_total}); nothing is reset silently.
 */
final class HttpApiHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(HttpApiHandler.class);

    private final CacheApi api;
    private final ApiMetrics metrics;
    private final HttpLimits limits;
    private final HttpAdmission admission;
    private final Executor executor;

    private ChannelHandlerContext ctx;
    private ConnectionState state = ConnectionState.IDLE;
    /** Decoded messages not yet processed: the pipelined requests behind the current one. */
    private final ArrayDeque<HttpObject> inbound = new ArrayDeque<>();
    private int queuedRequests;
    /** A request beyond the pipelining bound was decoded: everything after it is dropped, the bound answered. */
    private boolean pipelineOverflow;
    /** The request being received or executed; null between requests. */
    private InFlightRequest current;
    /**
     * The endpoint of the request being checked before admission (null before routing succeeded), so a refusal
     * before {@link #current} exists is counted under its endpoint, not {@code none} (issue 33).
     */
    private ApiEndpoint routed;
    /** The one deadline of the current state; a state change cancels it. */
    private final ConnectionDeadline deadline = new ConnectionDeadline();
    private long bodyBytesThisWindow;
    private long lingeredBytes;
    /** Why this connection is closing; null until the server closes it ("client" when the peer did). */
    private String closeCause;
    /** True once {@link #close} ran: the first cause stays (a stalled answer's failed write is its consequence). */
    private boolean closing;

    /** The key of this connection's client in the per-client body allowance (issue 33); set when active. */
    private Object client = RequestRouting.UNIX_CLIENT;

    /** What every connection's handler shares once the API serves. */
    record Wiring(CacheApi api, ApiMetrics metrics) {}

    HttpApiHandler(CacheApi api, ApiMetrics metrics, HttpLimits limits, HttpAdmission admission, Executor executor) {
        this.api = api;
        this.metrics = metrics;
        this.limits = limits;
        this.admission = admission;
        this.executor = executor;
    }

    // ------------------------------------------------------------------ connection events

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        client = RequestRouting.clientKey(ctx.channel().remoteAddress());
        metrics.connectionOpened();
        armIdle();
        ctx.read();
        ctx.fireChannelActive();
    }

    /**
     * Raw bytes, before the HTTP decoder ({@link RawBytes}): the first byte of a request starts its header
     * deadline; while lingering, bytes are counted and dropped without decoding.
     *
     * @return true if the bytes go on to the decoder
     */
    boolean onRawBytes(ByteBuf bytes) {
        switch (state) {
            case LINGERING, CLOSED -> {
                lingeredBytes += bytes.readableBytes();
                metrics.lingered(bytes.readableBytes());
                if (state == ConnectionState.LINGERING && lingeredBytes > limits.timeouts().lingerBytesMax()) {
                    close("linger_bytes");
                }
                return false;
            }
            case IDLE -> {
                to(ConnectionState.HEADERS);
                arm(limits.timeouts().headerMs(), this::headerDeadline);
            }
            default -> {
                // HEADERS keeps its deadline; BODY counts decoded body bytes; EXECUTING reads nothing
            }
        }
        return true;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof HttpObject http) || !state.reading() && state != ConnectionState.EXECUTING
                || pipelineOverflow) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (http instanceof HttpRequest && queuedRequests >= limits.pipelinedRequestsMax()) {
            pipelineOverflow = true; // answered when the queue ahead of it has drained (in order)
            ReferenceCountUtil.release(msg);
            return;
        }
        if (http instanceof HttpRequest) {
            queuedRequests++;
        }
        inbound.add(http);
        drain();
    }

    /** Processes queued messages while the state allows, then asks for more bytes if they are needed. */
    private void drain() {
        while (state.reading() && !inbound.isEmpty()) {
            HttpObject msg = inbound.poll();
            if (msg instanceof HttpRequest) {
                queuedRequests--;
            }
            try {
                process(msg);
            } catch (ApiException e) {
                refuse(e, true);
            } catch (RuntimeException e) {
                LOG.error("HTTP request processing failed", e);
                refuse(new ApiException(ApiError.INTERNAL, "internal error: " + e.getClass().getSimpleName()), true);
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }
        if (state.reading() && inbound.isEmpty()) {
            if (pipelineOverflow && current == null) {
                refuse(new ApiException(ApiError.TOO_MANY_PIPELINED_REQUESTS, "more than "
                        + limits.pipelinedRequestsMax() + " requests were pipelined behind the one executing"), true);
                return;
            }
            ctx.read();
        }
    }

    private void process(HttpObject msg) {
        RequestRouting.checkDecoded(msg);
        if (msg instanceof HttpRequest req) {
            onRequest(req);
        }
        if (msg instanceof HttpContent content && current != null) {
            onContent(content);
        }
    }

    // ------------------------------------------------------------------ one request

    private void onRequest(HttpRequest req) {
        routed = null;
        RequestTarget target = RequestTarget.parse(req.uri());
        ApiEndpoint endpoint = RequestRouting.route(target, req);
        routed = endpoint;
        RequestRouting.authorize(endpoint, req, limits);
        RequestRouting.checkContentType(endpoint, req.headers().get(HttpHeaderNames.CONTENT_TYPE));
        long declared = RequestRouting.declaredLength(endpoint, req, limits);
        boolean chunked = HttpUtil.isTransferEncodingChunked(req);
        Namespace saveNamespace = endpoint == ApiEndpoint.SAVE ? JsonRequests.namespaceParameter(target.single("namespace")) : null;
        admission.admit(endpoint);
        InFlightRequest r = new InFlightRequest(endpoint, HttpUtil.isKeepAlive(req), target, saveNamespace,
                endpoint.body == ApiEndpoint.Body.BLOCKS
                        ? api.beginSave(saveNamespace, limits.saveBodyBytesMax(), limits.blockBytesMax()) : null,
                endpoint.body == ApiEndpoint.Body.JSON ? ctx.alloc().compositeBuffer() : null, chunked ? -1 : Math.max(0, declared));
        r.slot = true;
        current = r;
        routed = null;
        if (r.declaredBytes > 0) {
            reserve(r, r.declaredBytes);
        }
        if (HttpUtil.is100ContinueExpected(req)) {
            ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
        }
        to(ConnectionState.BODY);
        bodyBytesThisWindow = 0;
        arm(limits.timeouts().bodyProgressMs(), this::bodyProgressDeadline);
    }

    /** Reserves body bytes of the admitted request {@code r} (429 when the budget is exhausted). */
    private void reserve(InFlightRequest r, long bytes) {
        admission.reserveBody(client, bytes);
        r.reservedBytes += bytes;
    }

    private void onContent(HttpContent content) {
        InFlightRequest r = current;
        ByteBuf chunk = content.content();
        int n = chunk.readableBytes();
        if (r.declaredBytes < 0 && n > 0) {
            reserve(r, n);
        }
        switch (r.endpoint.body) {
            case BLOCKS -> r.save.feed(chunk);
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
        bodyBytesThisWindow += n;
        if (content instanceof LastHttpContent) {
            to(ConnectionState.EXECUTING);
            dispatch(r);
        }
    }

    private void dispatch(InFlightRequest r) {
        r.dispatchedNanos = System.nanoTime();
        try {
            executor.execute(() -> execute(r));
        } catch (RejectedExecutionException e) {
            r.executingNanos = r.dispatchedNanos;
            r.abortSave();
            respond(r, CacheApi.error(new ApiException(ApiError.SHUTTING_DOWN, "the Manager is shutting down")), false);
        }
    }

    /** Runs on a virtual thread. Every outcome, an Error included, is answered: nothing is dropped silently. */
    private void execute(InFlightRequest r) {
        r.executingNanos = System.nanoTime();
        respond(r, EndpointCalls.answer(api, limits, metrics, r, ctx.alloc()), r.keepAlive);
    }

    /**
     * Shutdown (issue 33), when {@code --shutdown-drain-ms} ran out: a request still arriving (headers or body) is
     * answered 503 {@code SHUTTING_DOWN} with {@code Connection: close}, its unread input discarded within the
     * linger bounds, never cut silently. An executing request keeps running; its answer closes the connection.
     * Runs on the connection's event loop.
     */
    void shutdownCut() {
        if (state == ConnectionState.HEADERS || state == ConnectionState.BODY) {
            refuse(new ApiException(ApiError.SHUTTING_DOWN, "the Manager is shutting down: this request was not"
                    + " complete when the drain bound (--shutdown-drain-ms) ran out; nothing of it was stored"), true);
        }
    }

    /**
     * Shutdown, the last step before connections are closed: as {@link #shutdownCut()}, and an idle keep-alive
     * connection is closed (cause {@code shutdown}). Executing and lingering connections close themselves.
     * Runs on the connection's event loop.
     */
    void shutdownClose() {
        shutdownCut();
        if (state == ConnectionState.IDLE) {
            close("shutdown");
        }
    }

    /** True once the connection is closed. */
    boolean closed() {
        return state == ConnectionState.CLOSED;
    }

    /** Writes the answer of an executed request; then the next request, or close. */
    private void respond(InFlightRequest r, ApiResponse response, boolean keepAliveAsked) {
        // once shutdown began, every answer ends its connection: nothing new will be admitted on it
        boolean keepAlive = keepAliveAsked && admission.accepting();
        metrics.answered(r.endpoint.label, response.status());
        r.respondedNanos = System.nanoTime();
        r.answeredStatus = response.status();
        if (response.streamed() != null) {
            respondStreamed(r, response, keepAlive);
            return;
        }
        FullHttpResponse http = RequestRouting.httpResponse(response);
        r.answeredBytes = http.content().readableBytes();
        HttpUtil.setKeepAlive(http, keepAlive);
        ctx.writeAndFlush(http).addListener(answered(r, keepAlive));
    }

    /** After an answer was written (or not): the request's slot returns, the connection idles, closes or drains. */
    private ChannelFutureListener answered(InFlightRequest r, boolean keepAlive) {
        return f -> {
            HttpRequestEvent.record(r, f.isSuccess());
            r.release(admission, client);
            if (current == r) {
                current = null;
            }
            if (!f.isSuccess()) {
                LOG.debug("HTTP answer to {} not written: {}", ctx.channel().remoteAddress(), String.valueOf(f.cause()));
                close("write_failed");
            } else if (!keepAlive) {
                close("answered_close");
            } else if (state == ConnectionState.EXECUTING) {
                to(ConnectionState.IDLE);
                armIdle();
                drain();
            }
        };
    }

    /** A streamed answer (issue 35 item 4), on the request's virtual thread; a cut closes the connection. */
    private void respondStreamed(InFlightRequest r, ApiResponse response, boolean keepAlive) {
        ChunkedRecordSink.answer(ctx, response, keepAlive, r.endpoint.path, answered(r, keepAlive), () -> {
            r.release(admission, client);
            if (current == r) {
                current = null;
            }
            close("write_failed");
        });
    }

    /**
     * An answer before the request ended (or instead of a request): {@code Connection: close}, no state
     * changed. With {@code linger}, unread input is then discarded within the linger bounds so that a client
     * still writing its body reads the answer instead of a reset; the output side is shut after the answer.
     */
    private void refuse(ApiException e, boolean linger) {
        InFlightRequest r = current;
        current = null;
        metrics.error(e.error());
        releaseQueued();
        to(ConnectionState.LINGERING);
        closeCause = e.error().status() == 408 ? e.error().name().toLowerCase(Locale.ROOT) : "refused";
        if (r != null) {
            r.discardBody(); // a refused or malformed save stores nothing (issue 20 item 3)
        }
        FullHttpResponse http = RequestRouting.httpResponse(CacheApi.error(e));
        http.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ApiEndpoint labelled = r != null ? r.endpoint : routed;
        routed = null;
        metrics.answered(labelled != null ? labelled.label : "none", e.error().status());
        boolean discard = linger && limits.timeouts().lingerMs() > 0;
        if (discard) {
            ctx.channel().config().setAutoRead(true);
        }
        ctx.writeAndFlush(http).addListener((ChannelFutureListener) f -> {
            if (r != null) {
                r.release(admission, client);
            }
            if (!f.isSuccess() || !discard || state != ConnectionState.LINGERING) {
                close(f.isSuccess() ? closeCause : "write_failed");
                return;
            }
            RequestRouting.endOutput(ctx); // the client sees the end of the answer while we drain its body
            arm(limits.timeouts().lingerMs(), () -> close("linger_timeout"));
        });
    }

    private void releaseQueued() {
        HttpObject m;
        while ((m = inbound.poll()) != null) {
            ReferenceCountUtil.release(m);
        }
        queuedRequests = 0;
    }

    // ------------------------------------------------------------------ deadlines

    private void headerDeadline() {
        refuse(new ApiException(ApiError.HEADER_TIMEOUT, "the request line and headers did not arrive within "
                + limits.timeouts().headerMs() + " ms (--http-header-timeout-ms)"), false);
    }

    private void bodyProgressDeadline() {
        if (bodyBytesThisWindow >= limits.timeouts().bodyProgressBytesMin()) {
            bodyBytesThisWindow = 0;
            arm(limits.timeouts().bodyProgressMs(), this::bodyProgressDeadline);
            return;
        }
        refuse(new ApiException(ApiError.BODY_TIMEOUT, "the body delivered " + bodyBytesThisWindow + " bytes in "
                + limits.timeouts().bodyProgressMs() + " ms; at least " + limits.timeouts().bodyProgressBytesMin()
                + " are required per window (--http-body-progress-ms, --http-body-progress-bytes-min)"), false);
    }

    private void armIdle() {
        arm(limits.timeouts().idleMs(), () -> close("idle_timeout"));
    }

    private void arm(long ms, Runnable onExpiry) {
        deadline.arm(ctx, () -> state != ConnectionState.CLOSED, ms, onExpiry);
    }

    /** The one place the state changes; the old state's deadline goes with it. */
    private void to(ConnectionState next) {
        state = state.to(next);
        deadline.cancel(); // a deadline armed for the old state never fires
    }

    private void close(String cause) {
        if (!closing) {
            closing = true;
            closeCause = cause;
        }
        ctx.close();
    }

    /**
     * The pipeline's first handler ({@code IdleStateHandler} observing output) reports no write completed for
     * {@code writeStallMs}. Its first event after a write is a baseline only (Netty fires it whatever the output
     * did, and records the outbound buffer's progress); a later one means the pending bytes did not move for a
     * whole window, which is a reader that stopped, so the answer is cut: at most twice the bound after the last
     * progress. Without pending bytes the connection is just quiet, which the state's own deadlines judge.
     */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent e && e.state() == IdleState.WRITER_IDLE) {
            if (e.isFirst()) {
                return;
            }
            var out = ctx.channel().unsafe().outboundBuffer();
            if (out != null && out.totalPendingWriteBytes() > 0 && state != ConnectionState.CLOSED) {
                LOG.debug("HTTP connection {}: {} answer bytes made no progress in {} ms (write_stall)",
                        ctx.channel().remoteAddress(), out.totalPendingWriteBytes(), limits.timeouts().writeStallMs());
                close("write_stall");
            }
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        ConnectionState before = state;
        if (state != ConnectionState.CLOSED) {
            to(ConnectionState.CLOSED);
        }
        InFlightRequest r = current;
        current = null;
        if (r != null && before != ConnectionState.EXECUTING) { // an executing request is released by its answer
            r.discardBody();
            r.release(admission, client);
        }
        releaseQueued();
        metrics.connectionClosed(closeCause != null ? closeCause : "client");
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.debug("HTTP connection {} failed (counted as io_error): {}", ctx.channel().remoteAddress(), cause.toString());
        close("io_error");
    }
}
