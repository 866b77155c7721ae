package orbitkv.recovery;

/**
 * Why a recoverable prefix ends where it ends (IDX-14). The planner reports the first group from the evidence
 * alone; execution may end a prefix earlier with the second group.
 */
public enum PrefixStop {
    /** Every demanded key is in the prefix. */
    COMPLETE("complete"),

    // --- planner: the key at the stop index has no eligible route
    /** Nobody lists the key and coverage is CompleteAtWatermarks: absent at those watermarks (not "since"). */
    ABSENT_AT_WATERMARKS("absent-at-watermarks"),
    /** Nobody lists the key but coverage is PartialHints: an owner without a complete view may hold it. */
    NOT_IN_PARTIAL_HINTS("not-in-partial-hints"),
    /** The key is not local and there is no distributed metadata (coverage Unavailable). */
    METADATA_UNAVAILABLE("metadata-unavailable"),
    /** Only stale hints list the key and the demand does not allow them. */
    STALE_HINTS_ONLY("stale-hints-only"),
    /** The key is listed only on route kinds without a qualified path on this Manager. */
    NO_QUALIFIED_PATH("no-qualified-path"),
    /** Every listing of the key was refused earlier in this request (request-local evidence, ROUTE-7). */
    REJECTED_IN_REQUEST("rejected-in-request"),
    /** The next key would exceed the destination's capacity. */
    DESTINATION_CAPACITY("destination-capacity"),
    /** The completion target is not supported: nothing is planned. */
    TARGET_UNSUPPORTED("target-unsupported"),

    // --- execution
    /** The deadline passed before the next route could be admitted or before its READ became ready. */
    DEADLINE("deadline"),
    /** A pre-submission refusal came after the replan budget was spent (ROUTE-7). */
    REPLANS_EXHAUSTED("replans-exhausted"),
    /** A submitted READ ended with a payload failure; nothing is retried blindly (ROUTE-8). */
    PAYLOAD_FAILURE("payload-failure"),
    /** The waiting thread was interrupted; a cancelled wait is not drain (ROUTE-8). */
    CANCELLED("cancelled");

    private final String traceName;

    PrefixStop(String traceName) {
        this.traceName = traceName;
    }

    public String traceName() {
        return traceName;
    }
}
