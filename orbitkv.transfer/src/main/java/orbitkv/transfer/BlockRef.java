package orbitkv.transfer;

import java.util.Objects;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;

/**
 * One exact residence generation the requester asks a source to authorize: its index row's evidence, never
 * a pointer or a grant (INV-2). Together with the source incarnation it is the generation
 * {@code (incarnation, StateKey, medium, residency_sequence)} (INV-3).
 *
 * @param key the state key
 * @param medium where the source holds it
 * @param residencySequence the exact residency sequence, {@code >= 1}
 */
public record BlockRef(StateKey key, Medium medium, long residencySequence) {
    public BlockRef {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(medium, "medium");
        if (residencySequence < 1) {
            throw new IllegalArgumentException("residencySequence must be >= 1, got " + residencySequence);
        }
    }
}
