package orbitkv.server.restore;

import java.util.List;
import java.util.Optional;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;

/**
 * The seam between a restore and the current incarnation's distributed metadata: the index's evidence for a demand
 * and the transfer ends of peer routes. Implemented by whoever owns the incarnation (the HTTP adapter over its
 * metadata today); a standalone Manager answers with no remote evidence and no transfer. Never blocks on etcd or a
 * peer (IDX-6).
 */
public interface RestoreView {
    /** The index's evidence for {@code keys} (same order). */
    IndexEvidence evidence(Namespace namespace, List<StateKey> keys);

    /** The transfer ends of peer routes; empty when standalone. */
    Optional<RestoreTransfer> transfer();
}
