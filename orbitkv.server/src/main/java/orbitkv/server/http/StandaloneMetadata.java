package orbitkv.server.http;

import java.util.Collections;
import java.util.List;
import java.util.Optional;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StateKey;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;

/**
 * Distributed metadata of a {@code --standalone} Manager: there is none (INV-10). Queries answer coverage
 * {@code Unavailable} with local candidates only, {@code /cache/sync} answers {@code {"standalone": true}}
 * (API-3: never an invented fence), await refuses with {@link ApiError#STANDALONE}, and status reports the
 * local view with no membership and no owners.
 *
 * <p>The incarnation is local and unregistered (epoch 1, random id): it names this process's residences in
 * answers and logs, and no peer ever admits it.
 */
final class StandaloneMetadata implements DistributedMetadata {
    private final String clusterName;
    private final Incarnation incarnation;
    private final Scope scope;

    StandaloneMetadata(String clusterName, Incarnation incarnation, Scope scope) {
        this.clusterName = clusterName;
        this.incarnation = incarnation;
        this.scope = scope;
    }

    @Override
    public Lookup lookup(Namespace namespace, List<StateKey> keys) {
        return Lookup.none(Coverage.Unavailable, 0, keys.size());
    }

    @Override
    public Optional<ApiModel.Fence> fence() {
        return Optional.empty();
    }

    @Override
    public ApiModel.AwaitResponse await(JsonRequests.AwaitRequest request) {
        throw new ApiException(ApiError.STANDALONE,
                "this Manager runs --standalone: there is no distributed metadata to await");
    }

    @Override
    public ApiModel.StatusResponse status(int ownersLimit, String pageToken, long headSequence) {
        if (pageToken != null) {
            throw new ApiException(ApiError.INVALID_QUERY_PARAMETER,
                    "owners_page_token is not a token of this Manager (a standalone Manager has no owner pages)");
        }
        Object namespaces = scope instanceof Scope.NamespaceList list
                ? list.namespaces().stream().map(n -> new String(n.bytes(), java.nio.charset.StandardCharsets.UTF_8)).toList()
                : "all";
        return new ApiModel.StatusResponse(ClusterIdentity.PROTOCOL, new ApiModel.Cluster(clusterName, null), self(),
                new ApiModel.ScopeView(scope.digest().hex(), 1, namespaces),
                new ApiModel.MembershipStatus(null, false, 0, "standalone", 0, new ApiModel.RefusedRecords(0, 0, 0)),
                Coverage.Unavailable.name(),
                new ApiModel.InventoryStatus(headSequence, null, null, null, new ApiModel.Stamp(null, null)),
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
    public ApiModel.Owner self() {
        return new ApiModel.Owner(incarnation.nodeId().value(), incarnation.epoch().value(), incarnation.id().toString());
    }
}
