package orbitkv.inventory;

/**
 * Why a receiver's staging view or owner view was reset; reported in diagnostics (DIAG-1) and logged
 * once. Never a reason to touch another owner's rows.
 */
public enum ResetCause {
    /** The session ended before commit: staging is discarded (SNAP-10). */
    DISCONNECT,
    /** A newer session for the same source replaced this one (SES-6). */
    SESSION_REPLACED,
    /** A needed journal interval was trimmed; bootstrap restarts from a new S0 (SNAP-4). */
    SNAPSHOT_ABORTED,
    /** A commit marker failed validation; the staging attempt is discarded (SNAP-7). */
    COMMIT_REJECTED,
    /** The view could not fit the index budget and was withdrawn (SNAP-12). */
    BUDGET_EXCEEDED,
    /** The source incarnation left membership; its rows are excluded and cleaned (IDX-13). */
    MEMBER_REMOVED,
    /** The session detected a protocol violation and closed. */
    PROTOCOL_ERROR
}
