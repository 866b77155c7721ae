package orbitkv.server.http;

import java.util.Map;
import java.util.Objects;

/**
 * A refusal with a stable {@link ApiError} code and a message naming the field and bound; changes no state. It may
 * carry response headers the refusal needs (a 405's {@code Allow}), because a refusal thrown before the request is
 * recorded has no endpoint the answer could derive them from.
 */
public final class ApiException extends RuntimeException {
    private final ApiError error;
    private final transient Map<String, String> headers;

    public ApiException(ApiError error, String message) {
        this(error, message, Map.of());
    }

    public ApiException(ApiError error, String message, Map<String, String> headers) {
        super(message, null, false, false);
        this.error = Objects.requireNonNull(error, "error");
        this.headers = Map.copyOf(headers);
    }

    public ApiError error() {
        return error;
    }

    /** Headers the answer to this refusal carries (for example {@code Allow} on a 405); usually empty. */
    public Map<String, String> headers() {
        return headers;
    }
}
