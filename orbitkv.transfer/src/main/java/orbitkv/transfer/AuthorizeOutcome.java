package orbitkv.transfer;

import java.util.List;
import java.util.Objects;

/** The outcome of {@link TransferEngine#authorize}. */
public sealed interface AuthorizeOutcome {
    /** At least one block was granted (and pinned); the grant lists every block's result. */
    record Granted(Grant grant) implements AuthorizeOutcome {
        public Granted {
            Objects.requireNonNull(grant, "grant");
        }
    }

    /** The request was valid but every block was refused; nothing is pinned. */
    record NothingGranted(List<BlockResult.Refused> refusals) implements AuthorizeOutcome {
        public NothingGranted {
            refusals = List.copyOf(refusals);
        }
    }

    /** The source refused the whole request (a request-level reason); nothing is pinned, no state changed. */
    record Refused(RefusalReason reason, String detail) implements AuthorizeOutcome {
        public Refused {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(detail, "detail");
            if (reason.level() != RefusalReason.Level.REQUEST) {
                throw new IllegalArgumentException(reason + " is not a request-level refusal");
            }
        }
    }

    /**
     * No answer, or no usable one. After {@link AuthorizeFailure#DEADLINE_EXCEEDED} or
     * {@link AuthorizeFailure#UNAVAILABLE} the source may have pinned blocks: they stay pinned until that
     * grant's expiry, its terminal owner.
     */
    record Failed(AuthorizeFailure failure, String detail) implements AuthorizeOutcome {
        public Failed {
            Objects.requireNonNull(failure, "failure");
            Objects.requireNonNull(detail, "detail");
        }
    }

    /** Why an Authorize call produced no usable answer (requester side). */
    enum AuthorizeFailure {
        /** The call's deadline passed. */
        DEADLINE_EXCEEDED,
        /** The source could not be reached or the call failed in transport. */
        UNAVAILABLE,
        /** The answer broke the protocol (wrong block count, bad widths, unknown enum). */
        PROTOCOL_VIOLATION,
        /** The engine already tracks {@code grantsTrackedMax} grants. */
        GRANTS_TRACKED_LIMIT,
        /** The engine is closed. */
        ENGINE_CLOSED
    }
}
