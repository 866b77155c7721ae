package orbitkv.transfer;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The outcome of {@link TransferEngine#authorize}. Every answer the source gave may carry the source's load
 * summary ({@link #load()}, ROUTE-9): evidence for the caller's route selection, never part of the decision the
 * outcome states.
 */
public sealed interface AuthorizeOutcome {
    /** The answering source's load summary, when it sent a well-formed one; empty when there was no answer. */
    Optional<SourceLoad> load();

    /** At least one block was granted (and pinned); the grant lists every block's result. */
    record Granted(Grant grant, Optional<SourceLoad> load) implements AuthorizeOutcome {
        public Granted {
            Objects.requireNonNull(grant, "grant");
            Objects.requireNonNull(load, "load");
        }

        public Granted(Grant grant) {
            this(grant, Optional.empty());
        }
    }

    /** The request was valid but every block was refused; nothing is pinned. */
    record NothingGranted(List<BlockResult.Refused> refusals, Optional<SourceLoad> load) implements AuthorizeOutcome {
        public NothingGranted {
            refusals = List.copyOf(refusals);
            Objects.requireNonNull(load, "load");
        }

        public NothingGranted(List<BlockResult.Refused> refusals) {
            this(refusals, Optional.empty());
        }
    }

    /** The source refused the whole request (a request-level reason); nothing is pinned, no state changed. */
    record Refused(RefusalReason reason, String detail, Optional<SourceLoad> load) implements AuthorizeOutcome {
        public Refused {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(detail, "detail");
            Objects.requireNonNull(load, "load");
            if (reason.level() != RefusalReason.Level.REQUEST) {
                throw new IllegalArgumentException(reason + " is not a request-level refusal");
            }
        }

        public Refused(RefusalReason reason, String detail) {
            this(reason, detail, Optional.empty());
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

        /** No usable answer, so no load evidence (a summary on an answer that broke the protocol is dropped). */
        @Override
        public Optional<SourceLoad> load() {
            return Optional.empty();
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
