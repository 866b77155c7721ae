package orbitkv.membership;

import java.util.Objects;

/**
 * What membership tells the other modules. Delivered in order to each listener.
 *
 * <ul>
 *   <li>{@link Changed}: a new view (members added, replaced or removed; IDX-13).</li>
 *   <li>{@link Suspended}: a watch gap; remote admission stops until membership is re-read (MEM-9).</li>
 *   <li>{@link Fenced}: the conservative lease deadline passed; irrevocable for this incarnation
 *       (INV-7). Sessions close and grants stop; local cache service continues (INV-10).</li>
 * </ul>
 */
public sealed interface MembershipEvent {
    /** The view after the event. */
    MembershipView view();

    /** Membership changed; {@code view} is the new admitted set. */
    record Changed(MembershipView view) implements MembershipEvent {
        public Changed {
            Objects.requireNonNull(view, "view");
        }
    }

    /** Remote admission suspended (watch gap or unreachable etcd); {@code view} is not valid. */
    record Suspended(MembershipView view, String cause) implements MembershipEvent {
        public Suspended {
            Objects.requireNonNull(view, "view");
            Objects.requireNonNull(cause, "cause");
        }
    }

    /** This incarnation is fenced, irrevocably; {@code view} is not valid. */
    record Fenced(MembershipView view, Incarnation fenced, FenceCause cause) implements MembershipEvent {
        public Fenced {
            Objects.requireNonNull(view, "view");
            Objects.requireNonNull(fenced, "fenced incarnation");
            Objects.requireNonNull(cause, "cause");
        }
    }

    /** Why an incarnation was fenced. */
    enum FenceCause {
        /** Last confirmed renewal + TTL - safety margin passed on the monotonic clock (MEM-8). */
        LEASE_DEADLINE_PASSED,
        /** Another registration replaced this incarnation's member record. */
        REPLACED_BY_NEWER_INCARNATION,
        /** The lease was revoked or reported expired by etcd. */
        LEASE_LOST,
        /**
         * This incarnation's own member record was rewritten by something that is not a registration (issue 33):
         * its content or lease differs from what this incarnation registered, or it names another incarnation
         * that no registration transaction wrote (a put on this incarnation's lease, an epoch not above this
         * one's, or no epoch key written at the record's revision). Healable: a heal may replace exactly that
         * tampered record (MEM-2, INV-7).
         */
        MEMBER_RECORD_TAMPERED,
        /** The operator shut the process down (graceful deregistration). */
        SHUTDOWN
    }
}
