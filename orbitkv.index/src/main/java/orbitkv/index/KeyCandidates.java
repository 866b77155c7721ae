package orbitkv.index;

import java.util.List;
import java.util.Objects;
import orbitkv.inventory.StateKey;

/**
 * The replicas known for one looked-up key, at most {@code replicasPerMediumMax} per medium (IDX-9).
 *
 * @param key the key as asked
 * @param replicas fresh before stale, then by owner; positive evidence only
 * @param truncated true when more replicas existed than returned; the list is still positive evidence
 */
public record KeyCandidates(StateKey key, List<Replica> replicas, boolean truncated) {
    public KeyCandidates {
        Objects.requireNonNull(key, "candidates key must not be null");
        replicas = List.copyOf(replicas);
    }
}
