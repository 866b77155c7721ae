package orbitkv.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Map;
import java.util.Objects;

/**
 * One HTTP answer before it is written: status, content type, body (owned: released by the writer) and
 * extra headers.
 */
record ApiResponse(int status, String contentType, ByteBuf body, Map<String, String> headers) {
    ApiResponse {
        Objects.requireNonNull(contentType, "contentType");
        Objects.requireNonNull(body, "body");
        headers = Map.copyOf(headers);
    }

    static ApiResponse json(int status, byte[] json) {
        return new ApiResponse(status, "application/json", Unpooled.wrappedBuffer(json), Map.of());
    }
}
