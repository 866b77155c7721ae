package orbitkv.inventory;

import java.util.Objects;
import java.util.UUID;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;

/**
 * The source's authoritative inventory progress after waiting for already submitted local saves
 * (API-1): {@code {protocol, cluster_uuid, source_node_epoch, source_incarnation, inventory_sequence}}.
 * It is not durability and not visibility at any requester (API-2).
 *
 * @param protocol always {@link ClusterIdentity#PROTOCOL}
 * @param clusterUuid the source's cluster UUID
 * @param sourceIncarnation the source incarnation (node id and epoch included)
 * @param inventorySequence the source journal head sequence captured, {@code >= 0}
 */
public record InventoryFence(String protocol, UUID clusterUuid, Incarnation sourceIncarnation, long inventorySequence) {
    public InventoryFence {
        Objects.requireNonNull(protocol, "fence protocol must not be null");
        if (!ClusterIdentity.PROTOCOL.equals(protocol)) {
            throw new IllegalArgumentException(
                    "fence protocol must be '" + ClusterIdentity.PROTOCOL + "', got '" + protocol + "'");
        }
        Objects.requireNonNull(clusterUuid, "fence cluster uuid must not be null");
        Objects.requireNonNull(sourceIncarnation, "fence source incarnation must not be null");
        if (inventorySequence < 0) {
            throw new IllegalArgumentException("fence inventory sequence must be >= 0, got " + inventorySequence);
        }
    }

    public static InventoryFence of(ClusterIdentity cluster, Incarnation source, long inventorySequence) {
        return new InventoryFence(ClusterIdentity.PROTOCOL, cluster.uuid(), source, inventorySequence);
    }

    public NodeEpoch sourceNodeEpoch() {
        return sourceIncarnation.epoch();
    }
}
