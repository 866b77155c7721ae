package orbitkv.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Map;
import java.util.Objects;
import orbitkv.server.restore.StreamedRestore;

/**
 * One HTTP answer before it is written: status, content type, body (owned: released by the writer) and
 * extra headers; or, for a streamed answer, the head and the {@link Streamed} body the writer runs.
 *
 * @param streamed null for a whole answer; else the body written record by record (the {@code body} is empty)
 */
record ApiResponse(int status, String contentType, ByteBuf body, Map<String, String> headers, Streamed streamed) {
    ApiResponse {
        Objects.requireNonNull(contentType, "contentType");
        Objects.requireNonNull(body, "body");
        headers = Map.copyOf(headers);
    }

    ApiResponse(int status, String contentType, ByteBuf body, Map<String, String> headers) {
        this(status, contentType, body, headers, null);
    }

    static ApiResponse json(int status, byte[] json) {
        return new ApiResponse(status, "application/json", Unpooled.wrappedBuffer(json), Map.of());
    }

    /** A 200 answer whose body {@code streamed} writes as chunks after the head. */
    static ApiResponse streamed(String contentType, Map<String, String> headers, Streamed streamed) {
        return new ApiResponse(200, contentType, Unpooled.EMPTY_BUFFER, headers, Objects.requireNonNull(streamed));
    }

    /** A body written record by record (issue 35 item 4). */
    interface Streamed {
        /**
         * Writes the body into {@code sink}, in order; true when it ended whole (its last record written), false when
         * the connection was cut or it failed: the writer then closes the connection without the last chunk.
         */
        boolean writeTo(StreamedRestore.RecordSink sink) throws InterruptedException;
    }
}
