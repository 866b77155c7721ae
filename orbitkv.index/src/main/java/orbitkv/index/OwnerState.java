package orbitkv.index;

/**
 * The state of one source incarnation's owner view in the GlobalIndex (IDX-3, IDX-7, SNAP-11/12).
 * Only {@link #INSTALLED} counts toward {@link Coverage#CompleteAtWatermarks}.
 */
public enum OwnerState {
    /** Admitted but has not committed a view: not the same as an owner with an empty view (IDX-3). */
    AWAITING,
    /** A first snapshot is staging; nothing is served (SNAP-11). */
    BOOTSTRAPPING,
    /** An installed view is current. */
    INSTALLED,
    /** An installed view exists but is being repaired or replaced; its rows are served as stale hints (SNAP-11). */
    REPAIRING,
    /** The view did not fit the index budget and was withdrawn (SNAP-12). */
    WITHDRAWN,
    /** The incarnation left membership: excluded at once, rows cleaned asynchronously (IDX-1, IDX-13). */
    REMOVED
}
