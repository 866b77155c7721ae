package orbitkv.server.http;

import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.DecoderResultProvider;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.util.Locale;
import java.util.Map;
import orbitkv.server.api.ApiError;
import orbitkv.server.api.ApiException;
import orbitkv.server.api.BlockFraming;
import orbitkv.server.api.JsonRequests;

/**
 * The routing half of a connection ({@link HttpApiHandler} keeps the connection's state machine): a request head is
 * mapped to its {@link ApiEndpoint} (404/405), its bearer token checked (401), its content type (415) and its declared
 * length against the endpoint's body bound (413), and an answer is given its HTTP form. Each refusal is an
 * {@link ApiException} thrown before any state changes.
 */
final class RequestRouting {
    private RequestRouting() {}

    /** Every connection of the Unix-domain socket listener is the same client (one co-located host). */
    static final Object UNIX_CLIENT = "unix";

    /**
     * The client of a remote address: its IP address (every port of one host is one client), or the one Unix
     * socket client. Loopback addresses are as distinct as the addresses are (127.0.0.1 vs 127.0.0.2).
     */
    static Object clientKey(java.net.SocketAddress remote) {
        return remote instanceof java.net.InetSocketAddress inet && inet.getAddress() != null ? inet.getAddress() : UNIX_CLIENT;
    }

    /** A message the decoder could not read: 400 {@code MALFORMED_HTTP} (request line, headers or transfer encoding). */
    static void checkDecoded(HttpObject msg) {
        DecoderResult decoded = ((DecoderResultProvider) msg).decoderResult();
        if (decoded.isFailure()) {
            throw new ApiException(ApiError.MALFORMED_HTTP, (msg instanceof HttpRequest
                    ? "the request line or headers are malformed: " : "the body's transfer encoding is malformed: ")
                    + JsonRequests.clip(String.valueOf(decoded.cause().getMessage())));
        }
    }

    /** The endpoint at the target's path for the request's method. */
    static ApiEndpoint route(RequestTarget target, HttpRequest req) {
        ApiEndpoint endpoint = ApiEndpoint.byPath(target.path());
        if (endpoint == null) {
            throw new ApiException(ApiError.UNKNOWN_PATH, "no endpoint at " + JsonRequests.clip(target.path()));
        }
        if (!endpoint.method.equals(req.method())) {
            throw new ApiException(ApiError.METHOD_NOT_ALLOWED, endpoint.path + " accepts " + endpoint.method.name()
                    + ", got " + JsonRequests.clip(req.method().name()),
                    Map.of(HttpHeaderNames.ALLOW.toString(), endpoint.method.name()));
        }
        return endpoint;
    }

    /** The declared {@code Content-Length} (-1 when absent), refused beyond the endpoint's body bound. */
    static long declaredLength(ApiEndpoint endpoint, HttpRequest req, HttpLimits limits) {
        long bodyMax = switch (endpoint.body) {
            case BLOCKS -> limits.saveBodyBytesMax();
            case JSON -> limits.jsonBodyBytesMax();
            case EMPTY -> 0;
        };
        long declared = HttpUtil.getContentLength(req, -1L);
        if (declared > bodyMax) {
            throw endpoint.body == ApiEndpoint.Body.EMPTY
                    ? new ApiException(ApiError.UNEXPECTED_BODY, endpoint.path + " takes no body, Content-Length is " + declared)
                    : new ApiException(ApiError.BODY_TOO_LARGE, "Content-Length " + declared + " exceeds the bound of "
                            + bodyMax + " bytes for " + endpoint.path);
        }
        return declared;
    }

    /**
     * The bearer tokens (OPS-5, issue 33): more than one Authorization header is refused on every endpoint (which
     * one counts would be up to each proxy on the way: 400 {@code DUPLICATE_AUTHORIZATION}); a {@link
     * ApiEndpoint.Access#TOKEN} endpoint needs the write token when one is set; a {@link ApiEndpoint.Access#READ}
     * endpoint needs the read token or the write token when a read token is set. Compared in constant time.
     */
    static void authorize(ApiEndpoint endpoint, HttpRequest req, HttpLimits limits) {
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

    /** The media type (and UTF-8 charset) the endpoint's body needs (415 otherwise). */
    static void checkContentType(ApiEndpoint endpoint, String header) {
        if (endpoint.body == ApiEndpoint.Body.EMPTY) {
            return;
        }
        String expected = endpoint.body == ApiEndpoint.Body.BLOCKS ? BlockFraming.CONTENT_TYPE : "application/json";
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

    /** The HTTP form of an answer: status, content type and length, its headers, and the 401/429 hints. */
    static FullHttpResponse httpResponse(ApiResponse response) {
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

    /**
     * Ends the output side of a connection whose input is still drained: TLS {@code close_notify}, or a TCP/Unix
     * half-close, so the client reads the end of an answer while it still writes its body.
     */
    static void endOutput(io.netty.channel.ChannelHandlerContext ctx) {
        io.netty.handler.ssl.SslHandler tls = ctx.pipeline().get(io.netty.handler.ssl.SslHandler.class);
        if (tls != null) {
            tls.closeOutbound();
        } else if (ctx.channel() instanceof io.netty.channel.socket.DuplexChannel duplex) {
            duplex.shutdownOutput();
        }
    }
}
