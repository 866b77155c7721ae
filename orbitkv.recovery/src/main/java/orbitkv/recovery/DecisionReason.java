package orbitkv.recovery;

/** Why the executed plan is the fixed plan or an alternative (ROUTE-4, ROUTE-6); traced and counted. */
public enum DecisionReason {
    /** Nothing to choose: the recoverable prefix is empty. */
    EMPTY("empty"),
    /** The policy mode is {@link SelectionMode#FIXED}. */
    FIXED_MODE("fixed-mode"),
    /** A class of the fixed plan has fewer comparable successes than the policy requires (or none). */
    UNSAMPLED("unsampled"),
    /** The search's best complete alternative is the fixed plan itself. */
    FIXED_IS_BEST("fixed-is-best"),
    /** The best alternative's predicted gain does not exceed uncertainty plus hysteresis, or its risk is higher. */
    WITHIN_MARGIN("within-margin"),
    /** The batch's alternative budget ran out: the fixed plan, deterministically. */
    SEARCH_EXHAUSTED("search-exhausted"),
    /** The switch rule holds: the cost-driven alternative (executed only in COST_DRIVEN mode). */
    SWITCH("switch");

    private final String traceName;

    DecisionReason(String traceName) {
        this.traceName = traceName;
    }

    public String traceName() {
        return traceName;
    }
}
