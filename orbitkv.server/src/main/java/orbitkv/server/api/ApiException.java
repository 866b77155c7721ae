package orbitkv.server.api;

import java.util.Map;
import java.util.Objects;
import orbitkv.server.incarnation.MetadataRefusal;

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

    /**
     * The HTTP answer to a refusal of the incarnation's metadata: each {@link MetadataRefusal.Reason} has its one API
     * error code (docs/api.md), mapped here and nowhere else.
     */
    public static ApiException of(MetadataRefusal refusal) {
        ApiError error = switch (refusal.reason()) {
            case TOO_MANY_KEYS -> ApiError.TOO_MANY_KEYS;
            case CLUSTER_MISMATCH -> ApiError.CLUSTER_MISMATCH;
            case SCOPE_DIGEST_MISMATCH -> ApiError.SCOPE_DIGEST_MISMATCH;
            case INVALID_FIELD_VALUE -> ApiError.INVALID_FIELD_VALUE;
            case INVALID_QUERY_PARAMETER -> ApiError.INVALID_QUERY_PARAMETER;
            case OLD_INCARNATION -> ApiError.OLD_INCARNATION;
            case NOT_ADMITTED -> ApiError.NOT_ADMITTED;
            case AWAIT_TIMEOUT -> ApiError.AWAIT_TIMEOUT;
            case TOO_MANY_WAITERS -> ApiError.TOO_MANY_WAITERS;
            case METADATA_UNAVAILABLE -> ApiError.METADATA_UNAVAILABLE;
            case MEMBERSHIP_EXPIRED -> ApiError.MEMBERSHIP_EXPIRED;
            case STANDALONE -> ApiError.STANDALONE;
            case SCOPE_CHANGE_PENDING -> ApiError.SCOPE_CHANGE_PENDING;
        };
        return new ApiException(error, refusal.getMessage());
    }

    public ApiError error() {
        return error;
    }

    /** Headers the answer to this refusal carries (for example {@code Allow} on a 405); usually empty. */
    public Map<String, String> headers() {
        return headers;
    }
}
