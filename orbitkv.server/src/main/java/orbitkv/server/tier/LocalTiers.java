package orbitkv.server.tier;

import java.io.IOException;
import java.util.Objects;
import orbitkv.inventory.StateKey;

/**
 * This host's payload tiers as the API sees them: DRAM always, SSD optionally.
 *
 * <p>Save: the block becomes resident in DRAM before the save returns (INV-1: local storage only, no
 * metadata wait); with an SSD tier a copy is also queued for the asynchronous SSD writer (write-through),
 * which becomes an SSD residence once written. A refused SSD copy (queue full) does not fail the save: it
 * is counted by the SSD tier's refusal counters. Restore reads DRAM first, then SSD.
 */
public final class LocalTiers implements AutoCloseable {
    private final DramTier dram;
    private final SsdTier ssd;
    private final ResidencyListener listener;

    /** @param ssd null when there is no SSD tier */
    public LocalTiers(DramTier dram, SsdTier ssd, ResidencyListener listener) {
        this.dram = Objects.requireNonNull(dram, "dram");
        this.ssd = ssd;
        this.listener = Objects.requireNonNull(listener, "listener");
    }

    /** Which residences an evict removes. */
    public enum EvictTarget {
        DRAM,
        SSD,
        ALL
    }

    /** Saves {@code payload} (handed over, not copied again for SSD; the caller must not modify it). */
    public SaveOutcome save(StateKey key, byte[] payload) {
        SaveOutcome outcome = dram.put(key, payload);
        if (outcome instanceof SaveOutcome.Stored && ssd != null) {
            ssd.submit(key, payload); // refusals are counted by the SSD tier
        }
        return outcome;
    }

    /** Pins the block of {@code key} for reading, DRAM first. */
    public PinOutcome pin(StateKey key) {
        PinOutcome fromDram = dram.pin(key);
        if (!(fromDram instanceof PinOutcome.NotResident) || ssd == null) {
            return fromDram;
        }
        return ssd.pin(key);
    }

    /** The local residences of {@code key}, DRAM first (for query answers). */
    public java.util.List<Residence> residences(StateKey key) {
        java.util.List<Residence> out = new java.util.ArrayList<>(2);
        dram.residence(key).ifPresent(out::add);
        if (ssd != null) {
            ssd.residence(key).ifPresent(out::add);
        }
        return out;
    }

    /** Removes residences of {@code key}; returns how many (key, medium) residences were removed. */
    public int evict(StateKey key, EvictTarget target) {
        int removed = 0;
        if (target != EvictTarget.SSD && dram.evict(key)) {
            removed++;
        }
        if (target != EvictTarget.DRAM && ssd != null) {
            boolean wasResident = ssd.contains(key);
            if (ssd.evict(key) && wasResident) {
                removed++;
            }
        }
        return removed;
    }

    /**
     * Waits until every save submitted before this call is resident in all its tiers (the SSD writes
     * queued so far completed), bounded by {@code timeoutMs}. DRAM saves are resident when they return.
     */
    public boolean awaitSubmittedSaves(long timeoutMs) throws InterruptedException {
        return ssd == null || ssd.awaitWritten(ssd.lastTicket(), timeoutMs);
    }

    public long headSequence() {
        return listener.headSequence();
    }

    public DramTier dram() {
        return dram;
    }

    /** The SSD tier or null. */
    public SsdTier ssd() {
        return ssd;
    }

    @Override
    public void close() throws IOException {
        try {
            if (ssd != null) {
                ssd.close();
            }
        } finally {
            dram.close();
        }
    }
}
