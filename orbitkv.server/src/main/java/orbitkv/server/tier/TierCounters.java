package orbitkv.server.tier;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/** Monotonic counters of one tier, read by /metrics (DIAG-3: named refusal counters, never silent loss). */
public final class TierCounters {
    private final LongAdder stored = new LongAdder();
    private final LongAdder evicted = new LongAdder();
    private final LongAdder reads = new LongAdder();
    private final LongAdder evictedPinned = new LongAdder();
    private final LongAdder pinnedSkippedByLru = new LongAdder();
    private final LongAdder reservationsAborted = new LongAdder();
    private final LongAdder payloadBytesCopied = new LongAdder();
    private final LongAdder payloadBytesVerifiedInPlace = new LongAdder();
    private final LongAdder payloadBytesSavedIn = new LongAdder();
    private final AtomicLongArray refusals = new AtomicLongArray(TierRefusal.values().length);
    private final AtomicLongArray corrupt = new AtomicLongArray(CorruptionReason.values().length);

    void stored() {
        stored.increment();
    }

    void evicted() {
        evicted.increment();
    }

    void read() {
        reads.increment();
    }

    void evictedPinned() {
        evictedPinned.increment();
    }

    void pinnedSkippedByLru() {
        pinnedSkippedByLru.increment();
    }

    void reservationAborted() {
        reservationsAborted.increment();
    }

    void payloadCopied(long bytes) {
        payloadBytesCopied.add(bytes);
    }

    void payloadSavedIn(long bytes) {
        payloadBytesSavedIn.add(bytes);
    }

    void payloadVerifiedInPlace(long bytes) {
        payloadBytesVerifiedInPlace.add(bytes);
    }

    void refused(TierRefusal reason) {
        refusals.incrementAndGet(reason.ordinal());
    }

    void corrupt(CorruptionReason reason) {
        corrupt.incrementAndGet(reason.ordinal());
    }

    public long storedTotal() {
        return stored.sum();
    }

    /** Residences evicted by LRU to make room. */
    public long evictedTotal() {
        return evicted.sum();
    }

    /** Pins taken for reading (restore, transfer). */
    public long readsTotal() {
        return reads.sum();
    }

    /** Explicit evicts of a residence that was pinned: it left the map, its bytes stayed until the last unpin. */
    public long evictedPinnedTotal() {
        return evictedPinned.sum();
    }

    /** Pinned residences LRU passed over while looking for a victim. */
    public long pinnedSkippedByLruTotal() {
        return pinnedSkippedByLru.sum();
    }

    /** Save reservations freed without becoming residences (a malformed, refused or interrupted save). */
    public long reservationsAbortedTotal() {
        return reservationsAborted.sum();
    }

    public long refusedTotal(TierRefusal reason) {
        return refusals.get(reason.ordinal());
    }

    /** Stored blocks found broken on a read (each was evicted). */
    public long corruptTotal(CorruptionReason reason) {
        return corrupt.get(reason.ordinal());
    }

    /**
     * Payload bytes copied out of this tier by a verified {@code copyTo} (an SSD restore, a peer READ's source
     * side, a DRAM block of a caller that needs its own copy). Item 2 of issue 24 counts copies with it.
     */
    public long payloadBytesCopiedTotal() {
        return payloadBytesCopied.sum();
    }

    /** Payload bytes verified in place and sent from the arena without a copy (DRAM local restores). */
    public long payloadBytesVerifiedInPlaceTotal() {
        return payloadBytesVerifiedInPlace.sum();
    }

    /**
     * Payload bytes a save copied into this tier's reservations (issue 24 item 5): the one user-space copy of a
     * saved byte, from the HTTP receive buffer into the arena, with the CRC32C taken over the same chunk right
     * after it. Counted whether the save is later committed or aborted; {@code SaveCopiesTest} fails if a save
     * copies a payload byte more than once.
     */
    public long payloadBytesSavedInTotal() {
        return payloadBytesSavedIn.sum();
    }
}
