package orbitkv.conformance.kit;

import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;

/**
 * The kit's own members of the target's cluster (issue 34 item 6): {@link KitMembers} registers them in the
 * target's etcd; the in-process target adds them to its membership view. Node ids are {@code <prefix>-<role>};
 * roles {@code req*} are requester-only (MEM-11), any other role serves, advertising the kit's listener.
 */
interface KitIdentities {
    /**
     * One registration.
     *
     * @param incarnation the member's new incarnation (the next epoch of its node)
     * @param revision the membership revision that admits it; the target admits it once its view reaches it
     */
    record Registered(Incarnation incarnation, long revision) {}

    /** Registers (or re-registers, replacing the previous incarnation of) node {@code <prefix>-<role>}. */
    Registered register(String role);

    /** Deregisters {@code member} (idempotent). */
    void release(Incarnation member);

    /** The cluster identity (name and the format record's UUID). */
    ClusterIdentity cluster();
}
