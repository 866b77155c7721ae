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
 */
public record Member(Incarnation incarnation, Endpoint peer, Endpoint control, String protocol) {
    public Member {
        Objects.requireNonNull(incarnation, "member incarnation must not be null");
        Objects.requireNonNull(peer, "member peer endpoint must not be null");
        Objects.requireNonNull(control, "member control endpoint must not be null");
        Objects.requireNonNull(protocol, "member protocol must not be null");
        if (protocol.isEmpty() || protocol.length() > 128) {
            throw new IllegalArgumentException("member protocol must be 1..128 characters, got " + protocol.length());
        }
    }

    public NodeId nodeId() {
        return incarnation.nodeId();
    }
}
