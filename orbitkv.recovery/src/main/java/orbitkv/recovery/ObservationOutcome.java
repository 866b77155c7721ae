package orbitkv.recovery;

/**
 * How an executed route ended. Every outcome stays in the evidence (ROUTE-6): only successes train the
 * time model, and failures, timeouts and path refusals raise the class's risk.
 */
public enum ObservationOutcome {
    /** Host-ready with verified bytes. */
    SUCCEEDED,
    /** A submitted READ ended with a payload failure. */
    FAILED,
    /** A submitted READ was not ready by the deadline (its resources stay held until drain). */
    TIMED_OUT,
    /**
     * The path refused admission before submission for a path reason (pins exhausted, egress cap, source fenced,
     * unreachable). Stale-generation and not-resident refusals are metadata evidence, not path risk.
     */
    REFUSED
}
