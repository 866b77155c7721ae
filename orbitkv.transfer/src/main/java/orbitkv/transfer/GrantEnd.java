package orbitkv.transfer;

/** How a grant ended at its source: its pins' terminal owners (INV-9; a closed label set). */
public enum GrantEnd {
    /** The requester released it explicitly. */
    RELEASED,
    /** Its expiry passed on the source's monotonic clock. */
    EXPIRED,
    /** The requester's incarnation left the source's membership view. */
    EXCLUDED,
    /** The source incarnation was fenced (INV-7). */
    FENCED,
    /** The source closed. */
    CLOSED
}
