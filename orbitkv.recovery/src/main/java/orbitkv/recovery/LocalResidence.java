package orbitkv.recovery;

import java.util.Objects;
import orbitkv.inventory.Medium;

/**
 * One residence of a demanded key in this Manager's own tiers: authoritative locally (the local tiers never
 * need the index), still re-validated by its exact sequence when pinned (INV-2, INV-3).
 *
 * @param medium DRAM or SSD
 * @param sequence the residency sequence (the generation)
 * @param sizeBytes payload size
 */
public record LocalResidence(Medium medium, long sequence, long sizeBytes) {
    public LocalResidence {
        Objects.requireNonNull(medium, "local residence medium must not be null");
        if (sequence < 1 || sizeBytes < 0) {
            throw new IllegalArgumentException("local residence sequence must be >= 1 and size >= 0, got "
                    + sequence + ", " + sizeBytes);
        }
    }
}
