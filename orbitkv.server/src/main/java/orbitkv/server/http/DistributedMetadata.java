package orbitkv.server.http;

import java.util.List;
import java.util.Optional;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;

/**
 * What the HTTP API needs from distributed metadata (membership, inventory source, GlobalIndex). The
 * standalone implementation answers exactly as DESIGN §7 prescribes for a Manager without etcd
 * (INV-10, API-3); the distributed implementation arrives with the wiring. Implementations never block
 * a query on etcd or a peer (IDX-6).
 */
interface DistributedMetadata {
    /** The three discovery states (IDX-7). */
    enum Coverage {
        CompleteAtWatermarks,
        PartialHints,
        Unavailable
    }

    /**
     * The index answer for {@code keys}: coverage, view generation and remote candidates (IDX-8, IDX-9).
     *
     * @param remote per key (same order), the remote replicas, at most 4 per medium
     * @param truncated per key, whether the replica list was cut at the bound
     * @param replicas per key (same order), the same remote replicas as the index's records (owner incarnations),
     *     for restore routes
     */
    record Lookup(Coverage coverage, long viewGeneration, List<List<ApiModel.Replica>> remote, List<Boolean> truncated,
                  List<List<orbitkv.index.Replica>> replicas) {
        /** No remote evidence for {@code keys} keys. */
        static Lookup none(Coverage coverage, long viewGeneration, int keys) {
            return new Lookup(coverage, viewGeneration, java.util.Collections.nCopies(keys, List.of()),
                    java.util.Collections.nCopies(keys, false), java.util.Collections.nCopies(keys, List.of()));
        }
    }

    Lookup lookup(Namespace namespace, List<StateKey> keys);

    /**
     * The inventory fence after the submitted local saves are resident (API-1), or empty when standalone
     * (API-3: never an invented fence).
     */
    Optional<ApiModel.Fence> fence();

    /** The bounded await (API-4, API-5); throws {@link ApiException} with the specific refusal. */
    ApiModel.AwaitResponse await(JsonRequests.AwaitRequest request) throws InterruptedException;

    /** Diagnostics (DIAG-1); {@code pageToken} null for the first page. */
    ApiModel.StatusResponse status(int ownersLimit, String pageToken, long headSequence);

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

    /** Registers this implementation's figures (none for a standalone Manager); labels per DIAG-2. */
    default void registerMetrics(io.prometheus.metrics.model.registry.PrometheusRegistry registry) {}

    /** This process as an owner. */
    ApiModel.Owner self();

    /** The transfer ends of a distributed Manager (peer restores, transfer status); empty when standalone. */
    default Optional<orbitkv.server.transfer.PeerTransfer> transfer() {
        return Optional.empty();
    }
}
