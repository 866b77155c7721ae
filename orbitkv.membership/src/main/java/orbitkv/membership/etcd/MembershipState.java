package orbitkv.membership.etcd;

/**
 * The life of one registered incarnation (MEM-9, INV-7). {@code ACTIVE <-> SUSPENDED}: a watch gap
 * suspends remote admission until membership is re-read; {@code -> FENCED}: terminal, irrevocable.
 */
enum MembershipState {
    ACTIVE, SUSPENDED, FENCED;

    /**
     * The one transition function.
     *
     * @throws IllegalStateException naming the illegal edge (anything out of FENCED)
     */
    MembershipState to(MembershipState next) {
        boolean legal = switch (this) {
            case ACTIVE -> next == SUSPENDED || next == FENCED || next == ACTIVE;
            case SUSPENDED -> next == ACTIVE || next == FENCED || next == SUSPENDED;
            case FENCED -> false;
        };
        if (!legal) {
            throw new IllegalStateException("illegal membership transition " + this + " -> " + next);
        }
        return next;
    }
}
