package orbitkv.inventory.session;

import java.util.Objects;
import orbitkv.inventory.wire.ErrorCause;

/**
 * A frame or header refused with its named wire cause (SES-9): the session that meets it sends
 * {@code Error(cause)} and closes. An outcome, never thrown.
 */
record Refusal(ErrorCause cause, String detail) {
    Refusal {
        Objects.requireNonNull(cause, "cause");
        Objects.requireNonNull(detail, "detail");
    }
}
