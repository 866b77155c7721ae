package orbitkv.server.tier;

import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;

/**
 * Receives every residency change of a local tier (DESIGN §7: "each insert/evict is a journal record").
 * The wiring connects it to the source inventory (InventorySource), which assigns the residency sequence
 * under its own lock; until then {@link ResidencySequence} is the local sequence authority.
 *
 * <p>Contract: tiers call these methods while holding their own tier lock, so the order of journal
 * records equals the order of tier state changes for the same {@code (StateKey, medium)}. An
 * implementation must therefore be short, in-memory and non-blocking: it never waits on metadata,
 * etcd or peers (INV-1).
 */
public interface ResidencyListener {
    /** Returned when the listener assigns no sequence. */
    long NO_SEQUENCE = 0;

    /**
     * The block of {@code sizeBytes} is now resident (readable) in {@code medium}; a put replaces an
     * earlier residence of the same {@code (key, medium)}.
     *
     * @return the residency sequence assigned to this put ({@code >= 1}), or {@link #NO_SEQUENCE}
     */
    long onResident(StateKey key, Medium medium, long sizeBytes);

    /**
     * The residence of {@code (key, medium)} is gone (eviction or explicit evict). A DRAM eviction never
     * implies an SSD one (PUB-8).
     *
     * @return the residency sequence assigned to this delete, or {@link #NO_SEQUENCE}
     */
    long onEvicted(StateKey key, Medium medium);

    /** The latest sequence assigned so far, {@code 0} before the first change. */
    long headSequence();

    /**
     * The source inventory these changes go to, whose resident map {@code GET /cache/metadata/residences} lists;
     * empty for a listener that keeps no inventory ({@link ResidencySequence}, tier tests only).
     */
    default java.util.Optional<orbitkv.inventory.InventorySource> inventory() {
        return java.util.Optional.empty();
    }
}
