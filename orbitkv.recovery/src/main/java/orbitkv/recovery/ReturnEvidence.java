package orbitkv.recovery;

/**
 * What justifies giving leased bytes back to a {@link NodeAdmission} window (DESIGN S6: "native receive/transport
 * progress returns network credits").
 */
public enum ReturnEvidence {
    /**
     * The transport reports the bytes delivered, drained or terminally failed (no longer on the wire). Accepted from
     * any submitter and for any lease, expired or not: it is evidence, not a claim.
     */
    TRANSPORT_PROGRESS("transport-progress"),
    /**
     * The submitter states it never submitted the bytes. Accepted only from a live submitter for an unexpired lease;
     * otherwise refused as {@link CreditRefusal#UNSPENT_RETURN_UNTRUSTED}.
     */
    NEVER_SUBMITTED("never-submitted");

    private final String wireName;

    ReturnEvidence(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    /** Parses a {@link #wireName()}. */
    public static ReturnEvidence parse(String text) {
        for (ReturnEvidence e : values()) {
            if (e.wireName.equals(text)) {
                return e;
            }
        }
        throw new IllegalArgumentException("evidence must be transport-progress or never-submitted, got '" + text + "'");
    }
}
