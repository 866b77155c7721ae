package orbitkv.recovery;

/** How one route of a restore ended, as traced. */
public enum RouteOutcome {
    /** Host-ready: its blocks are delivered. */
    READY("ready"),
    /** The submitted READ failed (payload); nothing after it is attempted. */
    PAYLOAD_FAILURE("payload-failure"),
    /** The deadline passed while its READ was in flight; its resources stay held until drain. */
    TIMED_OUT("timed-out"),
    /** The wait was interrupted; its resources stay held until drain. */
    CANCELLED("cancelled"),
    /** Refused before submission (see the refusal). */
    REFUSED("refused"),
    /** Admitted but never submitted because an earlier route ended the request; released at once. */
    ABANDONED("abandoned");

    private final String traceName;

    RouteOutcome(String traceName) {
        this.traceName = traceName;
    }

    public String traceName() {
        return traceName;
    }
}
