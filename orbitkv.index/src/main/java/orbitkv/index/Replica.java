package orbitkv.index;

import java.util.Objects;
import orbitkv.inventory.Medium;
import orbitkv.membership.Incarnation;

/**
 * One candidate residence: evidence, never a pointer or a grant (INV-2). The source validates
 * {@code (owner, key, medium, sequence)} before any READ.
 *
 * @param owner the source incarnation that advertised it
 * @param medium DRAM or SSD
 * @param sequence the residency sequence (the generation, INV-3)
 * @param sizeBytes payload size
 * @param stale true when the owner view is repairing or older than the freshness budget (SNAP-11, IDX-10)
 */
public record Replica(Incarnation owner, Medium medium, long sequence, long sizeBytes, boolean stale) {
    public Replica {
        Objects.requireNonNull(owner, "replica owner must not be null");
        Objects.requireNonNull(medium, "replica medium must not be null");
        if (sequence < 1 || sizeBytes < 0) {
            throw new IllegalArgumentException("replica sequence must be >= 1 and size >= 0");
        }
    }
}
