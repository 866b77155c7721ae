package orbitkv.recovery.exec;

import java.util.EnumSet;
import java.util.Set;

/**
 * The life of one route inside a restore (ROUTE-7, ROUTE-8). Physical drain is not a state here: it is a separate
 * event (INV-8) that may arrive at any point after {@link #SUBMITTED}, and it alone releases a submitted route's
 * grant and credits.
 */
enum RunState {
    /** Nothing acquired yet. */
    NEW,
    /** Receive credits and the destination are held. */
    CREDITED,
    /** Refused before submission; everything acquired was released. Terminal. */
    REFUSED,
    /** Credits and the source grant are held; not submitted. */
    ADMITTED,
    /** Admitted, then not submitted because the request ended; released at once. Terminal. */
    ABANDONED,
    /** The READ is in flight. */
    SUBMITTED,
    /** Host-ready. Terminal. */
    READY,
    /** The READ failed. Terminal; resources held until drain. */
    PAYLOAD_FAILED,
    /** The deadline passed while the READ was in flight. Terminal; resources held until drain. */
    TIMED_OUT,
    /** The wait was interrupted. Terminal; resources held until drain. */
    CANCELLED;

    private Set<RunState> next;

    static {
        NEW.next = EnumSet.of(CREDITED, REFUSED);
        CREDITED.next = EnumSet.of(ADMITTED, REFUSED);
        ADMITTED.next = EnumSet.of(SUBMITTED, ABANDONED);
        SUBMITTED.next = EnumSet.of(READY, PAYLOAD_FAILED, TIMED_OUT, CANCELLED);
        for (RunState s : new RunState[] {REFUSED, ABANDONED, READY, PAYLOAD_FAILED, TIMED_OUT, CANCELLED}) {
            s.next = EnumSet.noneOf(RunState.class);
        }
    }

    /** The one transition check: returns {@code to}, or throws naming the illegal edge. */
    RunState to(RunState to) {
        if (!next.contains(to)) {
            throw new IllegalStateException("illegal route transition " + this + " -> " + to);
        }
        return to;
    }

    /** True once a READ was submitted: from then on only drain releases the resources. */
    boolean submitted() {
        return this == SUBMITTED || this == READY || this == PAYLOAD_FAILED || this == TIMED_OUT || this == CANCELLED;
    }
}
