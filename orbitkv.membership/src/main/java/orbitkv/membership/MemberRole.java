package orbitkv.membership;

/**
 * What a member does for the others (MEM-11). A {@link #SERVING} member (every Manager) is a source: every
 * other member subscribes to it with an InventorySession and its GlobalIndex coverage waits for it. A
 * {@link #REQUESTER} member only subscribes (an external indexer, the conformance kit's requesters): it is
 * admitted like any member, so it may open sessions to serving members, but nobody connects to it and it never
 * counts toward anyone's coverage. The member record carries the role as an optional seventh line
 * {@code role = requester}; a record without it is {@link #SERVING}.
 */
public enum MemberRole {
    /** Serves an inventory (a source); the default, and the only role a six-line record can express. */
    SERVING,
    /** Subscribes only: serves no InventorySession, so subscribers and the GlobalIndex ignore it (MEM-11). */
    REQUESTER;

    /** True iff subscribers connect to members of this role and coverage counts them. */
    public boolean serves() {
        return this == SERVING;
    }
}
