package orbitkv.recovery;

import java.util.List;
import java.util.Objects;
import orbitkv.index.Replica;
import orbitkv.inventory.StateKey;

/**
 * Everything known about one demanded key when the request starts: local residences and the GlobalIndex's
 * replicas (positive evidence only, never a grant: INV-2). Order inside the lists carries no meaning: the
 * planner's choice never depends on it.
 *
 * @param key the demanded key
 * @param local at most one residence per medium from the local tiers
 * @param remote at most {@value #REMOTE_REPLICAS_MAX} replicas from the index (it returns at most four per medium, IDX-9)
 * @param truncated the index had more replicas than it returned; the list is still positive evidence
 */
public record KeyEvidence(StateKey key, List<LocalResidence> local, List<Replica> remote, boolean truncated) {
    /** Bound on remote replicas per key accepted as evidence. */
    public static final int REMOTE_REPLICAS_MAX = 16;

    public KeyEvidence {
        Objects.requireNonNull(key, "key evidence key must not be null");
        local = List.copyOf(local);
        remote = List.copyOf(remote);
        int media = 0; // one bit per medium: at most one local residence each
        for (LocalResidence r : local) {
            int bit = 1 << r.medium().ordinal();
            if ((media & bit) != 0) {
                throw new IllegalArgumentException("key " + key + " has two local " + r.medium() + " residences");
            }
            media |= bit;
        }
        if (remote.size() > REMOTE_REPLICAS_MAX) {
            throw new IllegalArgumentException("key " + key + " has " + remote.size() + " remote replicas, more than "
                    + REMOTE_REPLICAS_MAX);
        }
    }

    /** A key held nowhere that the evidence knows of. */
    public static KeyEvidence none(StateKey key) {
        return new KeyEvidence(key, List.of(), List.of(), false);
    }
}
