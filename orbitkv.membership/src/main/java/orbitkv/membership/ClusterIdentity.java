package orbitkv.membership;

import java.util.Objects;
import java.util.UUID;

/**
 * A cluster: the operator's name (the etcd guard prefix {@code /orbitkv/v2/<name>/}) and the random,
 * persistent {@code cluster_uuid} written once by {@code orbitkv admin format} (MEM-1).
 *
 * <p>A UUID match is fencing between clusters that share a name or an etcd, not authentication (OPS-5).
 *
 * @param name cluster name, 1..64 characters of {@code [A-Za-z0-9._-]}
 * @param uuid the cluster UUID from the format record
 */
public record ClusterIdentity(String name, UUID uuid) {
    /** The protocol string of the format record and of every InventorySession Open (MEM-1, SES-4). */
    public static final String PROTOCOL = "orbitkv/inventory-stream/v4";

    public ClusterIdentity {
        IdentifierRule.require("cluster name", name);
        Objects.requireNonNull(uuid, "cluster uuid must not be null");
    }

    /** The etcd key prefix under which every key of this cluster lives, ending in {@code /}. */
    public String keyPrefix() {
        return "/orbitkv/v2/" + name + "/";
    }
}
