package orbitkv.membership;

import java.util.Objects;

/**
 * The bounded member record under {@code members/<node_id>} (DESIGN §3, MEM-4): who, at which
 * incarnation, behind which endpoints, speaking which protocol. Never an inventory or a block list.
 *
 * @param incarnation the registered incarnation (node id and epoch included)
 * @param peer the peer gRPC listener (InventorySession, transfer)
 * @param control the HTTP control listener
 * @param protocol the protocol string the member registered with
 * @param role serving (a source every member subscribes to) or requester-only (MEM-11)
 */
public record Member(Incarnation incarnation, Endpoint peer, Endpoint control, String protocol, MemberRole role) {
    public Member {
        Objects.requireNonNull(incarnation, "member incarnation must not be null");
        Objects.requireNonNull(peer, "member peer endpoint must not be null");
        Objects.requireNonNull(control, "member control endpoint must not be null");
        Objects.requireNonNull(protocol, "member protocol must not be null");
        if (protocol.isEmpty() || protocol.length() > 128) {
            throw new IllegalArgumentException("member protocol must be 1..128 characters, got " + protocol.length());
        }
        Objects.requireNonNull(role, "member role must not be null");
    }

    /** A serving member (a source), as every Manager registers. */
    public Member(Incarnation incarnation, Endpoint peer, Endpoint control, String protocol) {
        this(incarnation, peer, control, protocol, MemberRole.SERVING);
    }

    /** True iff subscribers connect to this member and coverage waits for it (false for requester-only, MEM-11). */
    public boolean serves() {
        return role.serves();
    }

    public NodeId nodeId() {
        return incarnation.nodeId();
    }
}
