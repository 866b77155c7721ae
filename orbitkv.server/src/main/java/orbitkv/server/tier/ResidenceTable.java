package orbitkv.server.tier;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;
import orbitkv.transfer.PayloadSource.PinResult;

/**
 * The bookkeeping both payload tiers share (one piece of code where the logic is the same): the resident
 * map in LRU order, the pin ledger bounded by count and bytes, retire-on-last-unpin, the residency listener
 * calls and the tier counters. A tier supplies only where bytes live ({@code S}: an arena extent, a file)
 * and how to free them.
 *
 * <p>Rules (INV-3, INV-9; the {@link orbitkv.transfer.PayloadSource} contract):
 * <ul>
 *   <li>Every put and every removal from the map is reported to the {@link ResidencyListener} under
 *       {@link #lock}, so journal order equals tier order for one {@code (StateKey, medium)}.</li>
 *   <li>A pin names one exact residence generation; pins are bounded by count and bytes and refused
 *       explicitly ({@link PinResult.PinLimit}, counted) beyond either.</li>
 *   <li>Removing a residence (replacement, LRU, explicit evict, corruption) takes it out of the map at once;
 *       its bytes are freed when its last pin is released, never before. LRU never picks a pinned
 *       residence (it could free nothing): each skip is counted; an explicit evict of a pinned residence is
 *       counted as such.</li>
 *   <li>Write-through pins (the SSD writer reading a DRAM residence) are charged to the SSD write queue's
 *       own count/bytes bound instead of this ledger, so queued copies never starve readers.</li>
 * </ul>
 *
 * <p>Concurrency: {@link #lock} guards the map, the ledger and the tier's own storage state (the DRAM
 * allocator, the SSD byte total); a tier takes it around compound operations. It is reentrant.
 *
 * @param <S> where one residence's bytes live
 */
final class ResidenceTable<S> {
    /** One residence: immutable identity and bytes, mutable pin state (guarded by the table lock). */
    static final class Entry<S> {
        final StateKey key;
        final long sizeBytes;
        final int crc32c;
        final S storage;
        long sequence;
        int pins;
        /** Out of the map: the bytes go when {@link #pins} reaches 0. */
        boolean retired;

        Entry(StateKey key, long sizeBytes, int crc32c, S storage) {
            this.key = key;
            this.sizeBytes = sizeBytes;
            this.crc32c = crc32c;
            this.storage = storage;
        }
    }

    final ReentrantLock lock = new ReentrantLock();
    private final Medium medium;
    private final ResidencyListener listener;
    private final Consumer<S> free;
    private final CountBytesBound pinLedger;
    private final TierCounters counters = new TierCounters();
    /** Access order = LRU order: the eldest entry is the first victim. */
    private final LinkedHashMap<StateKey, Entry<S>> map = new LinkedHashMap<>(1024, 0.75f, true);
    private long residentBytes;
    private int uncountedPins;
    private long uncountedPinnedBytes;
    private boolean closed;

    /**
     * @param free releases a residence's bytes; called under {@link #lock} once per entry, after removal and
     *     after its last pin
     */
    ResidenceTable(Medium medium, ResidencyListener listener, int pinsMax, long pinnedBytesMax, Consumer<S> free) {
        this.medium = medium;
        this.listener = listener;
        this.free = free;
        this.pinLedger = new CountBytesBound(medium + " pins", pinsMax, pinnedBytesMax);
    }

    Medium medium() {
        return medium;
    }

    TierCounters counters() {
        return counters;
    }

    /** Makes {@code entry} the residence of its key (replacing an older one, whose journal record it supersedes). */
    Entry<S> install(Entry<S> entry) {
        lock.lock();
        try {
            Entry<S> old = map.put(entry.key, entry);
            if (old != null) {
                residentBytes -= old.sizeBytes;
                retire(old);
            }
            residentBytes += entry.sizeBytes;
            entry.sequence = listener.onResident(entry.key, medium, entry.sizeBytes);
            counters.stored();
            return entry;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Reports every residence to the listener again, in LRU order (which it does not change), and records the
     * sequence each now carries: a healed Manager's new source lineage (INV-7, issue 17 item 5). The bytes,
     * pins and LRU order stay; a pin taken before keeps its entry, whose later readers see the new sequence.
     *
     * @return residences re-announced
     */
    int republish() {
        lock.lock();
        try {
            for (Entry<S> e : map.values()) {
                e.sequence = listener.onResident(e.key, medium, e.sizeBytes);
            }
            return map.size();
        } finally {
            lock.unlock();
        }
    }

    /** Explicit evict of {@code key}; true if it was resident. A pinned residence leaves the map, its bytes stay. */
    boolean evict(StateKey key) {
        lock.lock();
        try {
            Entry<S> e = map.remove(key);
            if (e == null) {
                return false;
            }
            if (e.pins > 0) {
                counters.evictedPinned();
            }
            drop(e);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes {@code entry} if it is still the residence of its key (a copy found its bytes broken): the
     * normal delete path, so peers stop listing it. Counted by the caller's reason.
     */
    boolean evictBroken(Entry<S> entry, CorruptionReason reason) {
        lock.lock();
        try {
            counters.corrupt(reason);
            if (map.get(entry.key) != entry) {
                return false;
            }
            map.remove(entry.key);
            drop(entry);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Evicts in LRU order until {@code size} more bytes fit within {@code bytesMax}; false if nothing evictable is left. */
    boolean makeRoom(long size, long bytesMax) {
        while (residentBytes() + size > bytesMax) {
            if (!evictEldestUnpinned()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Evicts the least recently used unpinned residence (a journal delete); false if every residence is
     * pinned or none is left. Pinned residences passed over are counted.
     */
    boolean evictEldestUnpinned() {
        lock.lock();
        try {
            Iterator<Entry<S>> it = map.values().iterator();
            while (it.hasNext()) {
                Entry<S> e = it.next();
                if (e.pins == 0) {
                    it.remove();
                    drop(e);
                    counters.evicted();
                    return true;
                }
                counters.pinnedSkippedByLru();
            }
            return false;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Pins the residence of {@code key} iff its sequence is exactly {@code sequence} (a use for LRU).
     *
     * @param charged false for a write-through pin bounded by the SSD queue instead of this ledger
     * @param pinned wraps the pinned entry; called under the lock
     */
    PinResult pin(StateKey key, long sequence, boolean charged, Function<Entry<S>, PinResult.Pinned> pinned) {
        lock.lock();
        try {
            if (closed) {
                return new PinResult.Closed();
            }
            Entry<S> e = map.get(key);
            if (e == null) {
                return new PinResult.NotResident();
            }
            if (e.sequence != sequence) {
                return new PinResult.StaleGeneration(e.sequence);
            }
            if (charged && !pinLedger.tryAdd(e.sizeBytes)) {
                counters.refused(TierRefusal.PINS_EXHAUSTED);
                return new PinResult.PinLimit(pinLedger.countMax(), pinLedger.bytesMax());
            }
            if (!charged) {
                uncountedPins++;
                uncountedPinnedBytes += e.sizeBytes;
            }
            e.pins++;
            if (charged) {
                counters.read();
            }
            return pinned.apply(e);
        } finally {
            lock.unlock();
        }
    }

    /** Releases one pin of {@code entry}; frees its bytes if it was retired and this was the last pin. */
    void unpin(Entry<S> entry, boolean charged) {
        lock.lock();
        try {
            if (entry.pins < 1) {
                throw new IllegalStateException("unpin of " + entry.key + " in " + medium + " without a pin");
            }
            entry.pins--;
            if (charged) {
                pinLedger.release(entry.sizeBytes);
            } else {
                uncountedPins--;
                uncountedPinnedBytes -= entry.sizeBytes;
                assert uncountedPins >= 0 && uncountedPinnedBytes >= 0 : medium + ": " + uncountedPins + " uncounted pins, "
                        + uncountedPinnedBytes + " bytes";
            }
            assert entry.pins >= 0 : entry.key + " in " + medium + " has " + entry.pins + " pins";
            if (entry.retired && entry.pins == 0 && !closed) {
                free.accept(entry.storage);
            }
        } finally {
            lock.unlock();
        }
    }

    /** The residence of {@code key} (a use for LRU). */
    Optional<Entry<S>> get(StateKey key) {
        lock.lock();
        try {
            return Optional.ofNullable(map.get(key));
        } finally {
            lock.unlock();
        }
    }

    /** The residence of {@code key} as queries report it (a use for LRU). */
    Optional<Residence> residence(StateKey key) {
        return get(key).map(e -> new Residence(medium, e.sequence, e.sizeBytes));
    }

    boolean contains(StateKey key) {
        lock.lock();
        try {
            return map.containsKey(key);
        } finally {
            lock.unlock();
        }
    }

    long residentBytes() {
        lock.lock();
        try {
            return residentBytes;
        } finally {
            lock.unlock();
        }
    }

    /** Figures for usage reports, read together under the lock. */
    TierUsage usage(long capacityBytes, long allocatedBytes, long reservedBytes) {
        lock.lock();
        try {
            return new TierUsage(medium, map.size(), residentBytes, capacityBytes, allocatedBytes, reservedBytes,
                    pinLedger.count() + uncountedPins, pinLedger.countMax(), pinLedger.bytes() + uncountedPinnedBytes,
                    pinLedger.bytesMax());
        } finally {
            lock.unlock();
        }
    }

    /** Marks the table closed: later pins are refused; nothing is freed any more (the tier frees everything). */
    boolean close() {
        lock.lock();
        try {
            boolean wasOpen = !closed;
            closed = true;
            return wasOpen;
        } finally {
            lock.unlock();
        }
    }

    boolean closed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    /** Out of the map: report the delete and retire the bytes. */
    private void drop(Entry<S> e) {
        residentBytes -= e.sizeBytes;
        listener.onEvicted(e.key, medium);
        retire(e);
    }

    private void retire(Entry<S> e) {
        e.retired = true;
        if (e.pins == 0 && !closed) {
            free.accept(e.storage);
        }
    }
}
