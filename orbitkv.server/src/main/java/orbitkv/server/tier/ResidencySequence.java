package orbitkv.server.tier;

import java.util.concurrent.atomic.AtomicLong;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;

/**
 * The local residency sequence of this incarnation: every put and delete takes the next sequence,
 * contiguously from 1 (INV-3: a new residence never reuses an old generation). Used by tier unit tests and
 * the tier benchmarks only: every Manager reports to its InventorySource through {@link SourceResidency}.
 * It keeps no journal and publishes nothing.
 */
public final class ResidencySequence implements ResidencyListener {
    private final AtomicLong head = new AtomicLong();

    @Override
    public long onResident(StateKey key, Medium medium, long sizeBytes) {
        return head.incrementAndGet();
    }

    @Override
    public long onEvicted(StateKey key, Medium medium) {
        return head.incrementAndGet();
    }

    @Override
    public long headSequence() {
        return head.get();
    }
}
