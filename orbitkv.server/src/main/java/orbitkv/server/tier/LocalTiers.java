package orbitkv.server.tier;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;
import orbitkv.transfer.PayloadSource;

/**
 * This host's payload tiers as the API and the transfer engine see them: DRAM always, SSD optionally.
 *
 * <p>Save ({@link #beginSave()}, a {@link SaveBatch}): records stream into DRAM reservations and become
 * resident together before the save returns (INV-1: local storage only, no metadata wait); with an SSD tier
 * each committed block is also queued for the asynchronous SSD writer (write-through, reading the DRAM
 * bytes under a write-through pin), which becomes an SSD residence once written. A refused SSD copy (queue
 * full) does not fail the save: it is counted by the SSD tier's refusal counters.
 *
 * <p>Read: the one pin contract, {@link PayloadSource}: a pin names the exact residence generation read
 * from {@link #residences}; every copy is verified against the block's CRC32C, and a broken block is
 * evicted (a journal delete) and counted.
 */
public final class LocalTiers implements PayloadSource, AutoCloseable {
    private final DramTier dram;
    private final SsdTier ssd;
    private final ResidencyListener listener;
    private final CopyOutBudget copyOut;
    private final RestoreArena restoreArena;
    private final orbitkv.server.admission.NodeAdmissionService admission;
    /**
     * Save commits hold it shared (a commit's sequences and its write-through pins belong to one source
     * lineage); {@link #republish} holds it exclusively.
     */
    private final java.util.concurrent.locks.ReentrantReadWriteLock lineage = new java.util.concurrent.locks.ReentrantReadWriteLock();

    /** With a copy-out budget as large as the DRAM tier (tests and tools). */
    public LocalTiers(DramTier dram, SsdTier ssd, ResidencyListener listener) {
        this(dram, ssd, listener, new CopyOutBudget(Math.max(1, dram.usage().capacityBytes())));
    }

    /**
     * @param ssd null when there is no SSD tier
     * @param copyOut the bound on bytes copied out into responses not yet written
     */
    public LocalTiers(DramTier dram, SsdTier ssd, ResidencyListener listener, CopyOutBudget copyOut) {
        this(dram, ssd, listener, copyOut, null);
    }

    /**
     * @param ssd null when there is no SSD tier
     * @param copyOut the bound on bytes copied out into responses not yet written
     * @param restoreArena the memory copied-out records use (closed with the tiers), or null: direct buffers
     */
    public LocalTiers(DramTier dram, SsdTier ssd, ResidencyListener listener, CopyOutBudget copyOut,
            RestoreArena restoreArena) {
        this(dram, ssd, listener, copyOut, restoreArena, null);
    }

    /**
     * @param admission the node-local S6 admission window (issue 39; closed with the tiers), or null: none
     */
    public LocalTiers(DramTier dram, SsdTier ssd, ResidencyListener listener, CopyOutBudget copyOut,
            RestoreArena restoreArena, orbitkv.server.admission.NodeAdmissionService admission) {
        this.admission = admission;
        this.dram = Objects.requireNonNull(dram, "dram");
        this.ssd = ssd;
        this.listener = Objects.requireNonNull(listener, "listener");
        this.copyOut = Objects.requireNonNull(copyOut, "copyOut");
        this.restoreArena = restoreArena;
    }

    /** The bound on restore response bytes held at once. */
    public CopyOutBudget copyOut() {
        return copyOut;
    }

    /** The node-local admission window (issue 39), if on: the node's NICs are a local resource like its memory. */
    public java.util.Optional<orbitkv.server.admission.NodeAdmissionService> admission() {
        return java.util.Optional.ofNullable(admission);
    }

    /** The memory restore records are copied or READ into, if this Manager maps one. */
    public java.util.Optional<RestoreArena> restoreArena() {
        return java.util.Optional.ofNullable(restoreArena);
    }

    /** Which residences an evict removes. */
    public enum EvictTarget {
        DRAM,
        SSD,
        ALL
    }

    /** Starts a save: see {@link SaveBatch}. */
    public SaveBatch beginSave() {
        return new SaveBatch(this);
    }

    /** Saves one block (a batch of one; tests and tools). */
    public SaveOutcome save(StateKey key, byte[] payload) {
        try (SaveBatch batch = beginSave()) {
            SaveOutcome.Refused refused = batch.reserve(key, payload.length);
            if (refused != null) {
                return refused;
            }
            try {
                batch.write(java.nio.ByteBuffer.wrap(payload));
            } catch (TierWriteFailed failed) { // the arena's filesystem could not back the bytes (issue 33)
                return failed.refusal(); // the batch aborts on close: nothing stored
            }
            return switch (batch.commit()) {
                case SaveBatch.Outcome.Stored s -> s.records().getFirst();
                case SaveBatch.Outcome.Refused r -> r.refusal();
            };
        }
    }

    /**
     * Moves the tiers onto a new source lineage (a healed Manager's new incarnation; INV-7, issue 17 item 5):
     * with save commits held off, {@code switchListener} points the residency listener at the new source,
     * then every DRAM and SSD residence is reported to it again under a fresh sequence. The bytes stay
     * where they are. Evictions and SSD write completions may run meanwhile: one that ran before the switch
     * is in the old lineage only and is re-announced (or, for a removal, not) by the table walk that follows;
     * one after the switch reports to the new source directly.
     *
     * @return residences re-announced
     */
    public int republish(Runnable switchListener) {
        lineage.writeLock().lock();
        try {
            switchListener.run();
            return dram.republish() + (ssd == null ? 0 : ssd.republish());
        } finally {
            lineage.writeLock().unlock();
        }
    }

    /** Runs a save commit inside one source lineage (see {@link #republish}). */
    <T> T inOneLineage(java.util.function.Supplier<T> commit) {
        lineage.readLock().lock();
        try {
            return commit.get();
        } finally {
            lineage.readLock().unlock();
        }
    }

    /** Queues the SSD copy of the DRAM residence {@code (key, sequence)} just committed, if there is an SSD tier. */
    void writeThrough(StateKey key, long sequence) {
        if (ssd == null) {
            return;
        }
        if (dram.pinForWriteThrough(key, sequence) instanceof PinResult.Pinned pin
                && pin.location() instanceof PayloadLocation.InArena arena) {
            ssd.submit(key, arena.bytes(), pin.crc32c(), pin::release); // refusals are counted by the SSD tier
        }
        // Otherwise a newer save or an evict already replaced it: that one queues its own copy, if any.
    }

    @Override
    public PinResult pin(StateKey key, Medium medium, long residencySequence) {
        return switch (medium) {
            case DRAM -> dram.pin(key, residencySequence);
            case SSD -> ssd == null ? new PinResult.NotResident() : ssd.pin(key, residencySequence);
        };
    }

    /**
     * Verifies a pin of these tiers where its bytes live (see {@link InPlace}); the pin stays held and its owner
     * releases it once the verified bytes are no longer read (a restore: when the response was written).
     *
     * @throws IllegalArgumentException if {@code pin} was not taken from these tiers
     */
    public InPlace verifyInPlace(PinResult.Pinned pin) {
        if (!(pin instanceof TierPin<?> own)) {
            throw new IllegalArgumentException("not a pin of these tiers: " + pin);
        }
        return own.verifyInPlace();
    }

    /** The local residences of {@code key}, DRAM first (for query answers and restore; a use for LRU). */
    public List<Residence> residences(StateKey key) {
        List<Residence> out = new ArrayList<>(2);
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

    /**
     * {@link #awaitSubmittedSaves} that also says which SSD copies of those saves failed (issue 33: /cache/sync
     * must not claim success for writes that failed); without an SSD tier, completed with no failure.
     */
    public SsdTier.WritesAwaited syncSubmittedSaves(long timeoutMs) throws InterruptedException {
        return ssd == null ? new SsdTier.WritesAwaited(true, 0, null) : ssd.awaitSubmittedWrites(timeoutMs);
    }

    /**
     * Records which incarnation these tiers serve, once registration has returned (the tiers open first, so
     * the directory is held before any etcd side effect): written into the SSD directory's lock file.
     */
    public void recordIncarnation(String incarnation) throws IOException {
        if (ssd != null) {
            ssd.recordIncarnation(incarnation);
        }
    }

    public long headSequence() {
        return listener.headSequence();
    }

    /** The source inventory of the current lineage (empty in tier tests wired to a bare sequence). */
    public java.util.Optional<orbitkv.inventory.InventorySource> inventory() {
        return listener.inventory();
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
            try {
                dram.close();
            } finally {
                if (restoreArena != null) {
                    restoreArena.close();
                }
                if (admission != null) {
                    admission.close();
                }
            }
        }
    }
}
