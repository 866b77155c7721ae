package orbitkv.conformance.kit;

import orbitkv.membership.Incarnation;

/**
 * The faults the kit may cause on the target (issue 34 item 6), given only with {@code --allow-fencing} for a
 * Manager ({@link TargetFence}: revoke its lease in etcd); the in-process target fences its objects directly.
 */
interface TargetFaults {
    /** Ends the lease of {@code target}'s member record, as a lost lease would (INV-7); fails the row if it cannot. */
    void revoke(Incarnation target) throws InterruptedException;

    /**
     * Makes the target's membership view invalid while its lease stays valid (a snapshot gap, MEM-9), if this
     * target lets the kit; false when it cannot (a Manager the kit does not own).
     */
    default boolean suspendMembership() {
        return false;
    }
}
