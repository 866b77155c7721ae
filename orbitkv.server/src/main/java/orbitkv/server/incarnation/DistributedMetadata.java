package orbitkv.server.incarnation;

import java.util.Collections;
import java.util.List;
import java.util.Optional;
import orbitkv.index.Coverage;
import orbitkv.index.Replica;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.server.transfer.PeerTransfer;

/**
 * What the Manager's API needs from distributed metadata (membership, inventory source, GlobalIndex), answered as
 * domain records ({@link IncarnationStatus}) and named refusals ({@link MetadataRefusal}) that the HTTP adapter maps
 * (issue 34 item 2). The standalone implementation answers exactly as DESIGN §7 prescribes for a Manager without
 * etcd (INV-10, API-3); the distributed one is {@link ClusterMetadata}, behind {@link CurrentIncarnation}.
 * Implementations never block a query on etcd or a peer (IDX-6).
 */
public interface DistributedMetadata {
    /**
     * The index answer for {@code keys}: coverage (the index's own {@link Coverage}), view generation and remote
     * candidates (IDX-8, IDX-9).
     *
     * @param truncated per key, whether the replica list was cut at the bound
     * @param replicas per key (same order), the remote replicas as the index's records (owner incarnations), at most
     *     4 per medium
     */
    record Lookup(Coverage coverage, long viewGeneration, List<Boolean> truncated, List<List<Replica>> replicas) {
        public Lookup {
            truncated = List.copyOf(truncated);
            replicas = List.copyOf(replicas);
        }

        /** No remote evidence for {@code keys} keys. */
        public static Lookup none(Coverage coverage, long viewGeneration, int keys) {
            return new Lookup(coverage, viewGeneration, Collections.nCopies(keys, false), Collections.nCopies(keys, List.of()));
        }
    }

    /** @throws MetadataRefusal TOO_MANY_KEYS beyond the index's lookup bound */
    Lookup lookup(Namespace namespace, List<StateKey> keys);

    /**
     * The inventory fence after the submitted local saves are resident (API-1), or empty when standalone
     * (API-3: never an invented fence).
     */
    Optional<IncarnationStatus.Fence> fence();

    /** The bounded await (API-4, API-5); throws {@link MetadataRefusal} with the specific refusal. */
    IncarnationStatus.AwaitResponse await(AwaitRequest request) throws InterruptedException;

    /** Diagnostics (DIAG-1); {@code pageToken} null for the first page. */
    IncarnationStatus.StatusResponse status(int ownersLimit, String pageToken, long headSequence);

    /** "ok", "degraded" or "fenced" for /health, with the mode ("standalone" or "distributed"). */
    String healthStatus();

    String mode();

    /**
     * Current members this Manager's source refused with SESSION_LIMIT and has not served since (issue 33, BND-3),
     * as incarnation strings; empty when none or standalone. Non-empty makes /health "degraded".
     */
    default List<String> sourceSessionsRefusedMembers() {
        return List.of();
    }

    /**
     * IDX-6 (issue 40): starts a change of the subscription scope (POST /cache/scope); returns at once.
     *
     * @throws MetadataRefusal STANDALONE without distributed metadata, MEMBERSHIP_EXPIRED once fenced,
     *     SCOPE_CHANGE_PENDING while another change bootstraps
     */
    default IncarnationStatus.ScopeChange changeScope(orbitkv.inventory.Scope scope, long timeoutMs) {
        throw new MetadataRefusal(MetadataRefusal.Reason.STANDALONE,
                "a standalone Manager has no distributed metadata and no subscription scope to change");
    }

    /** This process as an owner. */
    IncarnationStatus.Owner self();

    /** The transfer ends of a distributed Manager (peer restores, transfer status); empty when standalone. */
    default Optional<PeerTransfer> transfer() {
        return Optional.empty();
    }
}
