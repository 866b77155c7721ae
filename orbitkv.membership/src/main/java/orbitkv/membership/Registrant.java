package orbitkv.membership;

import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * Who registers: the cluster name, the node id, the advertised endpoints and, optionally, the cluster
 * UUID the process expects (a mismatch is refused: coordinator cluster identity validation, MEM-8).
 *
 * @param clusterName the cluster name (the guard prefix {@code /orbitkv/v2/<name>/})
 * @param nodeId the stable node id
 * @param peer the peer gRPC listener to advertise
 * @param control the HTTP control listener to advertise
 * @param expectedClusterUuid the UUID this process must find in the format record, if it knows one
 * @param role serving (every Manager) or requester-only (subscribes, serves nothing: MEM-11)
 */
public record Registrant(String clusterName, NodeId nodeId, Endpoint peer, Endpoint control,
                         Optional<UUID> expectedClusterUuid, MemberRole role) {
    public Registrant {
        IdentifierRule.require("cluster name", clusterName);
        Objects.requireNonNull(nodeId, "node id must not be null");
        Objects.requireNonNull(peer, "peer endpoint must not be null");
        Objects.requireNonNull(control, "control endpoint must not be null");
        Objects.requireNonNull(expectedClusterUuid, "expected cluster uuid must not be null (use Optional.empty())");
        Objects.requireNonNull(role, "member role must not be null");
    }

    /** A serving registrant (a Manager). */
    public Registrant(String clusterName, NodeId nodeId, Endpoint peer, Endpoint control,
                      Optional<UUID> expectedClusterUuid) {
        this(clusterName, nodeId, peer, control, expectedClusterUuid, MemberRole.SERVING);
    }

    public Registrant(String clusterName, NodeId nodeId, Endpoint peer, Endpoint control) {
        this(clusterName, nodeId, peer, control, Optional.empty());
    }

    /** The guard prefix {@code /orbitkv/v2/<cluster>/}. */
    public String keyPrefix() {
        return "/orbitkv/v2/" + clusterName + "/";
    }
}
