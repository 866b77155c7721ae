package orbitkv.recovery.admission;

import java.util.LinkedHashSet;
import java.util.Set;
import orbitkv.recovery.SubmitterKind;

/** The mutable records of {@link AdmissionOwner}, guarded by it. */
final class Entries {
    private Entries() {}

    /** A registered submitter. */
    static final class Submitter {
        final long id;
        final SubmitterKind kind;
        final String instance;
        final Set<Long> leases = new LinkedHashSet<>();
        boolean lost;

        Submitter(long id, SubmitterKind kind, String instance) {
            this.id = id;
            this.kind = kind;
            this.instance = instance;
        }
    }

    /** An outstanding lease; quarantined once expired or its submitter lost. */
    static final class Lease {
        final long id;
        final Submitter submitter;
        final Lane lane;
        final long expiresAt;
        long outstanding;
        boolean quarantined;

        Lease(long id, Submitter submitter, Lane lane, long bytes, long expiresAt) {
            this.id = id;
            this.submitter = submitter;
            this.lane = lane;
            this.outstanding = bytes;
            this.expiresAt = expiresAt;
        }

        boolean expired(long now) {
            return now - expiresAt >= 0;
        }
    }

    /** A queued request. */
    record Pending(long ticket, Submitter submitter, Lane lane, long bytes, long deadline, long remaining,
            long arrival) {}
}
