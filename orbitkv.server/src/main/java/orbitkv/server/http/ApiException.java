package orbitkv.server.http;

import java.util.Objects;

/** A refusal with a stable {@link ApiError} code and a message naming the field and bound; changes no state. */
public final class ApiException extends RuntimeException {
    private final ApiError error;

    public ApiException(ApiError error, String message) {
        super(message, null, false, false);
        this.error = Objects.requireNonNull(error, "error");
    }

    public ApiError error() {
        return error;
    }
}
