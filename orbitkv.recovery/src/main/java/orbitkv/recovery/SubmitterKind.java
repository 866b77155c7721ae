package orbitkv.recovery;

/**
 * Who charges a {@link NodeAdmission} window (DESIGN S6): the node-local owner accounts for every participating
 * submitter, so that a Manager-only limit is not claimed as node-wide control while P/D traffic bypasses it.
 */
public enum SubmitterKind {
    /** This Manager's restore READs (receive credits of peer routes). */
    MANAGER_READ("manager-read"),
    /** This Manager acting as a source: bytes it sends for peers' READs (egress). */
    MANAGER_EGRESS("manager-egress"),
    /** An engine's own P/D (prefill/decode disaggregation) WRITE traffic, charged through the admission API. */
    ENGINE_WRITE("engine-write");

    private final String wireName;

    SubmitterKind(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    /** Parses a {@link #wireName()}. */
    public static SubmitterKind parse(String text) {
        for (SubmitterKind k : values()) {
            if (k.wireName.equals(text)) {
                return k;
            }
        }
        throw new IllegalArgumentException("submitter kind must be manager-read, manager-egress or engine-write, got '"
                + text + "'");
    }
}
