package orbitkv.inventory;

import java.util.Objects;

/** What a {@link ViewReceiver} did with a snapshot begin or page (SNAP-1, SNAP-2, SES-14). */
public sealed interface StageOutcome {
    /**
     * The frame is in hidden staging and charged to the index budget; its credit may be returned
     * without advancing any installed watermark (SES-14).
     *
     * @param stagedRows rows (tombstones included) now held by the staging view
     */
    record Staged(long stagedRows) implements StageOutcome {
        public Staged {
            if (stagedRows < 0) {
                throw new IllegalArgumentException("staged rows must be >= 0, got " + stagedRows);
            }
        }
    }

    /** Refused; staging is unchanged, except that {@code BUDGET_EXCEEDED} discards it (SNAP-12). */
    record Rejected(RejectReason reason) implements StageOutcome {
        public Rejected {
            Objects.requireNonNull(reason, "reject reason must not be null");
        }
    }
}
