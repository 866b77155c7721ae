package orbitkv.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.DecoderResultProvider;
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
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.Namespace;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * (so clients that write a whole body before reading still receive it), then the connection closes. Every
 * close is counted by cause ({@code orbitkv_http_connections_closed_total}); nothing is reset silently.
 */
final class HttpApiHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(HttpApiHandler.class);
    static final int OWNERS_LIMIT_DEFAULT = 100;
    static final int OWNERS_LIMIT_MAX = 1000;
    /** Route traces per page of {@code /cache/metadata/routes} (the planner's own bound). */
    static final int TRACES_LIMIT_MAX = 1024;

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
    private Request current;
    /**
     * The endpoint of the request being checked before admission (null before routing succeeded), so a refusal
     * before {@link #current} exists is counted under its endpoint, not {@code none} (issue 33).
     */
    private Endpoint routed;
    private ScheduledFuture<?> deadline;
    /** Bumped at each state change, so a deadline that fires late for an old state does nothing. */
    private long epoch;
    private long bodyBytesThisWindow;
    private long lingeredBytes;
    /** Why this connection is closing; null until the server closes it ("client" when the peer did). */
    private String closeCause;

    /** The key of this connection's client in the per-client body allowance (issue 33); set when active. */
    private Object client = UNIX_CLIENT;

    /** Every connection of the Unix-domain socket listener is the same client (one co-located host). */
    static final Object UNIX_CLIENT = "unix";

    /**
     * The client of a remote address: its IP address (every port of one host is one client), or the one Unix
     * socket client. Loopback addresses are as distinct as the addresses are (127.0.0.1 vs 127.0.0.2).
     */
    static Object clientKey(java.net.SocketAddress remote) {
        return remote instanceof java.net.InetSocketAddress inet && inet.getAddress() != null ? inet.getAddress() : UNIX_CLIENT;
    }

    /** What every connection's handler shares once the API serves. */
    record Wiring(CacheApi api, ApiMetrics metrics) {}

    HttpApiHandler(CacheApi api, ApiMetrics metrics, HttpLimits limits, HttpAdmission admission, Executor executor) {
        this.api = api;
        this.metrics = metrics;
        this.limits = limits;
        this.admission = admission;
        this.executor = executor;
    }

    /** A request being received or executed. Its slot and reserved body bytes are released exactly once. */
    private static final class Request {
        final Endpoint endpoint;
        final boolean keepAlive;
        final RequestTarget target;
        final Namespace saveNamespace;
        /** A save streaming into DRAM reservations; aborted wherever the request is dropped before its commit. */
        final CacheApi.SaveStream save;
        final CompositeByteBuf bytes;
        /** The declared Content-Length, or -1 (chunked): then each chunk is reserved as it arrives. */
        final long declaredBytes;
        long received;
        long reservedBytes;
        boolean slot;

        Request(Endpoint endpoint, boolean keepAlive, RequestTarget target, Namespace saveNamespace,
                CacheApi.SaveStream save, CompositeByteBuf bytes, long declaredBytes) {
            this.endpoint = endpoint;
            this.keepAlive = keepAlive;
            this.target = target;
            this.saveNamespace = saveNamespace;
            this.save = save;
            this.bytes = bytes;
            this.declaredBytes = declaredBytes;
        }
    }

    // ------------------------------------------------------------------ connection events

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        client = clientKey(ctx.channel().remoteAddress());
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
        DecoderResult decoded = ((DecoderResultProvider) msg).decoderResult();
        if (decoded.isFailure()) {
            throw new ApiException(ApiError.MALFORMED_HTTP, (msg instanceof HttpRequest
                    ? "the request line or headers are malformed: " : "the body's transfer encoding is malformed: ")
                    + JsonRequests.clip(String.valueOf(decoded.cause().getMessage())));
        }
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
        Endpoint endpoint = Endpoint.byPath(target.path());
        if (endpoint == null) {
            throw new ApiException(ApiError.UNKNOWN_PATH, "no endpoint at " + JsonRequests.clip(target.path()));
        }
        if (!endpoint.method.equals(req.method())) {
            throw new ApiException(ApiError.METHOD_NOT_ALLOWED, endpoint.path + " accepts " + endpoint.method.name()
                    + ", got " + JsonRequests.clip(req.method().name()),
                    Map.of(HttpHeaderNames.ALLOW.toString(), endpoint.method.name()));
        }
        routed = endpoint;
        authorize(endpoint, req);
        long bodyMax = switch (endpoint.body) {
            case BLOCKS -> limits.saveBodyBytesMax();
            case JSON -> limits.jsonBodyBytesMax();
            case EMPTY -> 0;
        };
        checkContentType(endpoint, req.headers().get(HttpHeaderNames.CONTENT_TYPE));
        long declared = HttpUtil.getContentLength(req, -1L);
        boolean chunked = HttpUtil.isTransferEncodingChunked(req);
        if (declared > bodyMax) {
            throw endpoint.body == Endpoint.Body.EMPTY
                    ? new ApiException(ApiError.UNEXPECTED_BODY, endpoint.path + " takes no body, Content-Length is " + declared)
                    : new ApiException(ApiError.BODY_TOO_LARGE, "Content-Length " + declared + " exceeds the bound of "
                            + bodyMax + " bytes for " + endpoint.path);
        }
        Namespace saveNamespace = endpoint == Endpoint.SAVE ? JsonRequests.namespaceParameter(target.single("namespace")) : null;
        if (!admission.accepting()) {
            throw new ApiException(ApiError.SHUTTING_DOWN, "the Manager is shutting down");
        }
        if (!admission.tryAcquire(endpoint)) {
            throw endpoint.access == Endpoint.Access.PROBE
                    ? new ApiException(ApiError.TOO_MANY_PROBES_IN_FLIGHT, "more than " + limits.probesInFlightMax()
                            + " /health and /metrics requests are in flight")
                    : new ApiException(ApiError.TOO_MANY_REQUESTS_IN_FLIGHT, "more than " + limits.requestsInFlightMax()
                            + " requests are in flight");
        }
        Request r = new Request(endpoint, HttpUtil.isKeepAlive(req), target, saveNamespace,
                endpoint.body == Endpoint.Body.BLOCKS
                        ? api.beginSave(saveNamespace, limits.saveBodyBytesMax(), limits.blockBytesMax()) : null,
                endpoint.body == Endpoint.Body.JSON ? ctx.alloc().compositeBuffer() : null, chunked ? -1 : Math.max(0, declared));
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

    /**
     * The bearer tokens (OPS-5, issue 33): more than one Authorization header is refused on every endpoint (which
     * one counts would be up to each proxy on the way: 400 {@code DUPLICATE_AUTHORIZATION}); a {@link
     * Endpoint.Access#TOKEN} endpoint needs the write token when one is set; a {@link Endpoint.Access#READ}
     * endpoint needs the read token or the write token when a read token is set. Compared in constant time.
     */
    private void authorize(Endpoint endpoint, HttpRequest req) {
        java.util.List<String> all = req.headers().getAll(HttpHeaderNames.AUTHORIZATION);
        if (all.size() > 1) {
            throw new ApiException(ApiError.DUPLICATE_AUTHORIZATION, "the request carries " + all.size()
                    + " Authorization headers; exactly one is allowed");
        }
        String authorization = all.isEmpty() ? null : all.get(0);
        switch (endpoint.access) {
            case TOKEN -> {
                if (limits.token().isPresent() && !limits.token().get().matches(authorization)) {
                    throw new ApiException(ApiError.UNAUTHORIZED, authorization != null
                            ? endpoint.path + " needs the bearer token of --http-token-file; the Authorization header does not carry it"
                            : endpoint.path + " needs 'Authorization: Bearer <token>' (--http-token-file is set)");
                }
            }
            case READ -> {
                if (limits.readToken().isPresent()) {
                    // both compared, whichever matches: the time taken does not say which token was close
                    boolean reader = limits.readToken().get().matches(authorization);
                    boolean writer = limits.token().isPresent() && limits.token().get().matches(authorization);
                    if (!(reader | writer)) {
                        throw new ApiException(ApiError.UNAUTHORIZED, authorization != null
                                ? endpoint.path + " needs the bearer token of --http-read-token-file or --http-token-file;"
                                        + " the Authorization header carries neither"
                                : endpoint.path + " needs 'Authorization: Bearer <token>' (--http-read-token-file is set)");
                    }
                }
            }
            case OPEN, PROBE -> {
                // no token
            }
        }
    }

    /** Reserves body bytes of the admitted request {@code r} (429 when the budget is exhausted). */
    private void reserve(Request r, long bytes) {
        switch (admission.bodyBytes().tryReserve(client, bytes)) {
            case ADMITTED -> {
                // reserved
            }
            case TOTAL_EXCEEDED -> throw new ApiException(ApiError.TOO_MANY_BODY_BYTES_IN_FLIGHT, "admitting " + bytes
                    + " more body bytes would exceed --http-body-bytes-in-flight-max (" + admission.bodyBytes().max()
                    + " bytes across all connections); retry later");
            case CLIENT_EXCEEDED -> throw new ApiException(ApiError.TOO_MANY_CLIENT_BODY_BYTES_IN_FLIGHT, "admitting "
                    + bytes + " more body bytes would exceed this client's share, --http-body-bytes-in-flight-per-client-max ("
                    + admission.bodyBytes().perClientMax() + " bytes across its connections); retry later");
        }
        r.reservedBytes += bytes;
    }

    private void onContent(HttpContent content) {
        Request r = current;
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

    private void dispatch(Request r) {
        try {
            executor.execute(() -> execute(r));
        } catch (RejectedExecutionException e) {
            abortSave(r);
            respond(r, CacheApi.error(new ApiException(ApiError.SHUTTING_DOWN, "the Manager is shutting down")), false);
        }
    }

    /** Runs on a virtual thread. Every outcome, an Error included, is answered: nothing is dropped silently. */
    private void execute(Request r) {
        ApiResponse response;
        try {
            response = handle(r);
        } catch (ApiException e) {
            metrics.error(e.error());
            response = CacheApi.error(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            metrics.error(ApiError.SHUTTING_DOWN);
            response = CacheApi.error(new ApiException(ApiError.SHUTTING_DOWN, "interrupted by shutdown"));
        } catch (RuntimeException | Error e) {
            LOG.error("{} failed", r.endpoint.path, e);
            metrics.error(ApiError.INTERNAL);
            response = CacheApi.error(new ApiException(ApiError.INTERNAL, "internal error: " + e.getClass().getSimpleName()));
        } finally {
            if (r.bytes != null) {
                r.bytes.release();
            }
            abortSave(r); // a no-op after the save committed
        }
        respond(r, response, r.keepAlive);
    }

    private ApiResponse handle(Request r) throws InterruptedException {
        return switch (r.endpoint) {
            case SAVE -> api.save(r.save);
            case QUERY -> api.query(ByteBufUtil.getBytes(r.bytes));
            case RESTORE -> api.restore(ByteBufUtil.getBytes(r.bytes), ctx.alloc());
            case EVICT -> api.evict(ByteBufUtil.getBytes(r.bytes));
            case SYNC -> api.sync();
            case AWAIT -> api.await(ByteBufUtil.getBytes(r.bytes), limits.awaitTimeoutMsMax());
            case STATUS -> api.status(ownersLimit(r.target), r.target.text("owners_page_token"));
            case ROUTES -> api.routeTraces(tracesLimit(r.target), beforeId(r.target));
            case RESIDENCES -> api.residences(ResidencesRequest.parse(r.target));
            case METRICS -> api.metrics();
            case HEALTH -> api.health();
            case LIMITS -> api.limits(limits);
        };
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
    private void respond(Request r, ApiResponse response, boolean keepAliveAsked) {
        // once shutdown began, every answer ends its connection: nothing new will be admitted on it
        boolean keepAlive = keepAliveAsked && admission.accepting();
        metrics.answered(r.endpoint.label, response.status());
        if (response.streamed() != null) {
            respondStreamed(r, response, keepAlive);
            return;
        }
        FullHttpResponse http = httpResponse(response);
        HttpUtil.setKeepAlive(http, keepAlive);
        ctx.writeAndFlush(http).addListener(answered(r, keepAlive));
    }

    /** After an answer was written (or not): the request's slot returns, the connection idles, closes or drains. */
    private ChannelFutureListener answered(Request r, boolean keepAlive) {
        return f -> {
            release(r);
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
    private void respondStreamed(Request r, ApiResponse response, boolean keepAlive) {
        ChunkedRecordSink.answer(ctx, response, keepAlive, r.endpoint.path, answered(r, keepAlive), () -> {
            release(r);
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
        Request r = current;
        current = null;
        metrics.error(e.error());
        releaseQueued();
        to(ConnectionState.LINGERING);
        closeCause = e.error().status() == 408 ? e.error().name().toLowerCase(Locale.ROOT) : "refused";
        if (r != null) {
            if (r.bytes != null) {
                r.bytes.release();
            }
            abortSave(r); // a refused or malformed save stores nothing (issue 20 item 3)
        }
        FullHttpResponse http = httpResponse(CacheApi.error(e));
        http.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        Endpoint labelled = r != null ? r.endpoint : routed;
        routed = null;
        metrics.answered(labelled != null ? labelled.label : "none", e.error().status());
        boolean discard = linger && limits.timeouts().lingerMs() > 0;
        if (discard) {
            ctx.channel().config().setAutoRead(true);
        }
        ctx.writeAndFlush(http).addListener((ChannelFutureListener) f -> {
            if (r != null) {
                release(r);
            }
            if (!f.isSuccess() || !discard || state != ConnectionState.LINGERING) {
                close(f.isSuccess() ? closeCause : "write_failed");
                return;
            }
            io.netty.handler.ssl.SslHandler tls = ctx.pipeline().get(io.netty.handler.ssl.SslHandler.class);
            if (tls != null) {
                tls.closeOutbound(); // close_notify: a TLS client sees the end of the answer while we drain its body
            } else if (ctx.channel() instanceof DuplexChannel duplex) {
                duplex.shutdownOutput(); // the client sees the end of the answer while we drain its body
            }
            arm(limits.timeouts().lingerMs(), () -> close("linger_timeout"));
        });
    }

    private static FullHttpResponse httpResponse(ApiResponse response) {
        FullHttpResponse http = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.valueOf(response.status()), response.body());
        http.headers().set(HttpHeaderNames.CONTENT_TYPE, response.contentType());
        http.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, response.body().readableBytes());
        response.headers().forEach((k, v) -> http.headers().set(k, v));
        if (response.status() == 401) {
            http.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"orbitkv\"");
        }
        if (response.status() == 429) {
            http.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
        }
        return http;
    }

    /** Frees a save's DRAM reservations: a dropped, refused or malformed save stores nothing (issue 20 item 3). */
    private static void abortSave(Request r) {
        if (r.save != null) {
            r.save.abort();
        }
    }

    private void release(Request r) {
        if (r.slot) {
            r.slot = false;
            admission.release(r.endpoint);
        }
        if (r.reservedBytes > 0) {
            admission.bodyBytes().release(client, r.reservedBytes);
            r.reservedBytes = 0;
        }
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
        cancelDeadline();
        long armedAt = epoch;
        deadline = ctx.executor().schedule(() -> {
            if (epoch == armedAt && state != ConnectionState.CLOSED) {
                onExpiry.run();
            }
        }, ms, TimeUnit.MILLISECONDS);
    }

    private void cancelDeadline() {
        if (deadline != null) {
            deadline.cancel(false);
            deadline = null;
        }
    }

    /** The one place the state changes; the old state's deadline goes with it. */
    private void to(ConnectionState next) {
        state = state.to(next);
        epoch++;
        cancelDeadline();
    }

    private void close(String cause) {
        closeCause = cause;
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        ConnectionState before = state;
        if (state != ConnectionState.CLOSED) {
            to(ConnectionState.CLOSED);
        }
        Request r = current;
        current = null;
        if (r != null && before != ConnectionState.EXECUTING) { // an executing request is released by its answer
            if (r.bytes != null) {
                r.bytes.release();
            }
            abortSave(r);
            release(r);
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

    // ------------------------------------------------------------------ request details

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

    private static int ownersLimit(RequestTarget target) {
        String v = target.text("owners_limit");
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

    /** {@code limit} of the route traces page: 1..1024, default 100. */
    private static int tracesLimit(RequestTarget target) {
        String v = target.text("limit");
        if (v == null) {
            return OWNERS_LIMIT_DEFAULT;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= 1 && n <= TRACES_LIMIT_MAX) {
                return n;
            }
        } catch (NumberFormatException e) {
            // fall through to the refusal
        }
        throw new ApiException(ApiError.INVALID_QUERY_PARAMETER, "limit must be an integer 1.." + TRACES_LIMIT_MAX
                + ", got " + JsonRequests.clip(v));
    }

    /** {@code before_id} of the route traces page: a trace id from {@code next_before_id}, or absent. */
    private static java.util.OptionalLong beforeId(RequestTarget target) {
        String v = target.text("before_id");
        if (v == null) {
            return java.util.OptionalLong.empty();
        }
        try {
            long id = Long.parseLong(v);
            if (id >= 0) {
                return java.util.OptionalLong.of(id);
            }
        } catch (NumberFormatException e) {
            // fall through to the refusal
        }
        throw new ApiException(ApiError.INVALID_QUERY_PARAMETER, "before_id must be a trace id (an integer >= 0), got "
                + JsonRequests.clip(v));
    }

    /** The raw-bytes end of a connection, in front of the HTTP decoder (see {@link #onRawBytes}). */
    static final class RawBytes extends ChannelInboundHandlerAdapter {
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
}
