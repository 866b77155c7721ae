package orbitkv.server.incarnation;

import java.util.Collections;
import java.util.List;
import java.util.Optional;
import orbitkv.index.Coverage;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StateKey;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;

/**
 * Distributed metadata of a {@code --standalone} Manager: there is none (INV-10). Queries answer coverage
 * {@code Unavailable} with local candidates only, {@code /cache/sync} answers {@code {"standalone": true}}
 * (API-3: never an invented fence), await refuses with {@code STANDALONE}, and status reports the
 * local view with no membership and no owners.
 *
 * <p>The incarnation is local and unregistered (epoch 1, random id): it names this process's residences in
 * answers and logs, and no peer ever admits it.
 */
public final class StandaloneMetadata implements DistributedMetadata {
    private final String clusterName;
    private final Incarnation incarnation;
    private final Scope scope;

    public StandaloneMetadata(String clusterName, Incarnation incarnation, Scope scope) {
        this.clusterName = clusterName;
        this.incarnation = incarnation;
        this.scope = scope;
    }

    @Override
    public Lookup lookup(Namespace namespace, List<StateKey> keys) {
        return Lookup.none(Coverage.Unavailable, 0, keys.size());
    }

    @Override
    public Optional<IncarnationStatus.Fence> fence() {
        return Optional.empty();
    }

    @Override
    public IncarnationStatus.AwaitResponse await(AwaitRequest request) {
        throw new MetadataRefusal(MetadataRefusal.Reason.STANDALONE,
                "this Manager runs --standalone: there is no distributed metadata to await");
    }

    @Override
    public IncarnationStatus.StatusResponse status(int ownersLimit, String pageToken, long headSequence) {
        if (pageToken != null) {
            throw new MetadataRefusal(MetadataRefusal.Reason.INVALID_QUERY_PARAMETER,
                    "owners_page_token is not a token of this Manager (a standalone Manager has no owner pages)");
        }
        return new IncarnationStatus.StatusResponse(ClusterIdentity.PROTOCOL, new IncarnationStatus.Cluster(clusterName, null), self(),
                new IncarnationStatus.ScopeView(scope.digest().hex(), 1, ClusterMetadata.namespaces(scope)),
                new IncarnationStatus.MembershipStatus(null, false, 0, "standalone", 0, new IncarnationStatus.RefusedRecords(0, 0, 0)),
                Coverage.Unavailable.name(),
                new IncarnationStatus.InventoryStatus(headSequence, null, null, null, new IncarnationStatus.Stamp(null, null)),
                List.of(), null, null);
    }

    @Override
    public String healthStatus() {
        return "ok";
    }

    @Override
    public String mode() {
        return "standalone";
    }

    @Override
    public IncarnationStatus.Owner self() {
        return new IncarnationStatus.Owner(incarnation.nodeId().value(), incarnation.epoch().value(), incarnation.id().toString());
    }
}
