package orbitkv.inventory;

/**
 * Why a {@link ViewReceiver} refused a frame, a staging step or a commit. A refusal changes no view
 * state (DELTA-2, DELTA-5). Constants carry the v4 wire {@code ErrorCause} name they map onto
 * ({@link #wireCause()}), so the requester end of the session can report them without a lookup table.
 */
public enum RejectReason {
    /** The source incarnation is not admitted by the current membership view (SES-5). */
    UNKNOWN_SOURCE_INCARNATION("UNKNOWN_SOURCE_INCARNATION"),
    /** Membership is suspended, expired or fenced: no remote frame is admitted (MEM-9, INV-7). */
    MEMBERSHIP_SUSPENDED("MEMBERSHIP_SUSPENDED"),
    /** The snapshot's scope digest differs from the requester's scope digest (SES-7). */
    SCOPE_DIGEST_MISMATCH("SCOPE_DIGEST_MISMATCH"),
    /** A record names a namespace outside the requester's scope (SNAP-2). */
    SCOPE_INVALID("SCOPE_INVALID"),
    /**
     * A record's sequence lies outside the frame interval (DELTA-1), a residence appears twice in
     * one frame, a page holds a delete, or page records are not strictly increasing (SNAP-2).
     */
    MALFORMED_FRAME("MALFORMED_FRAME"),
    /** A page ordinal or frame number is not the next one, or a page follows a replay delta (SNAP-9). */
    FRAME_OUT_OF_ORDER("FRAME_OUT_OF_ORDER"),
    /** Two records of the same generation disagree (DELTA-5). */
    CONFLICTING_RECORD("CONFLICTING_RECORD"),
    /** Commit: missing pages, non-contiguous ordinals or replay, or a maximum scanned sequence mismatch (SNAP-7). */
    COMMIT_INCOMPLETE("COMMIT_INCOMPLETE"),
    /** Commit: the transcript digest differs from the received transcript (SNAP-7, SES-11). */
    TRANSCRIPT_DIGEST_MISMATCH("TRANSCRIPT_DIGEST_MISMATCH"),
    /** The frame or view cannot fit the index budget; the owner view was withdrawn (SNAP-12). */
    BUDGET_EXCEEDED("BUDGET_EXCEEDED"),
    /** The frame names a view that is neither the installed nor the staging view of this source (SNAP-8). */
    VIEW_UNKNOWN("RESUME_VIEW_UNKNOWN");

    private final String wireCause;

    RejectReason(String wireCause) {
        this.wireCause = wireCause;
    }

    /** The name of the v4 {@code ErrorCause} this refusal is reported as. */
    public String wireCause() {
        return wireCause;
    }
}
