package orbitkv.recovery;

import java.util.Objects;

/** The answer of a {@link NodeAdmission} call: never an exception for a bound, always a named outcome. */
public sealed interface AdmissionOutcome {
    /** A new submitter's id. */
    record Registered(long submitter) implements AdmissionOutcome {}

    /**
     * Credits granted: {@code bytes} are charged to {@code lane} until returned with evidence.
     *
     * @param lease the lease id (unique per owner)
     * @param ticket the queued request's ticket this grant answers; 0 for an immediate grant
     * @param expiresAtNanos the owner's clock after which an unspent return is no longer trusted
     */
    record Granted(long lease, long ticket, NicLane lane, long bytes, long expiresAtNanos) implements AdmissionOutcome {
        public Granted {
            Objects.requireNonNull(lane, "lane");
        }
    }

    /** The request waits in the scheduling queue; {@link NodeAdmission#advance()} answers the ticket later. */
    record Queued(long ticket) implements AdmissionOutcome {}

    /** Bytes given back; {@code outstanding} is what the lease still has charged. */
    record Returned(long lease, long bytes, long outstanding) implements AdmissionOutcome {}

    /** Nothing changed (except the refusal's counter); {@code ticket} is non-zero for a queued request's end. */
    record Refused(CreditRefusal reason, long ticket, String detail) implements AdmissionOutcome {
        public Refused {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(detail, "detail");
        }

        public Refused(CreditRefusal reason, String detail) {
            this(reason, 0, detail);
        }
    }
}
