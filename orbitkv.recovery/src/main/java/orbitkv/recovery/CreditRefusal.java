package orbitkv.recovery;

/**
 * Why {@link NodeAdmission} did not grant or queue a request (ROUTE-11, BND-1): every bound has its named refusal and
 * a counter in {@link AdmissionStatus#refusals()}. A refusal changes no state.
 */
public enum CreditRefusal {
    /** The lane's usable window (window minus reserve) cannot hold the bytes beside what is charged. */
    WINDOW_FULL("window-full"),
    /** The lane's pacer has not accrued the bytes yet. */
    PACED("paced"),
    /** An immediate request found queued work on its lane ahead of it (queued requests are never bypassed). */
    QUEUED_AHEAD("queued-ahead"),
    /** The bounded queue of waiting requests is full. */
    QUEUE_FULL("queue-full"),
    /** The bounded set of registered submitters is full. */
    SUBMITTERS_FULL("submitters-full"),
    /** The bounded set of outstanding leases is full. */
    LEASES_FULL("leases-full"),
    /** The submitter was declared lost: it gets nothing new until termination evidence frees its slot. */
    SUBMITTER_LOST("submitter-lost"),
    /** A queued request's deadline passed before it could be granted. */
    DEADLINE_PASSED("deadline-passed"),
    /**
     * A return without transport progress ({@link ReturnEvidence#NEVER_SUBMITTED}) for an expired lease or a lost
     * submitter: an old submitter may still spend those bytes, so they stay charged.
     */
    UNSPENT_RETURN_UNTRUSTED("unspent-return-untrusted");

    private final String wireName;

    CreditRefusal(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }
}
