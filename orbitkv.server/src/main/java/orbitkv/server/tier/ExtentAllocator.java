package orbitkv.server.tier;

import java.util.Map;
import java.util.TreeMap;

/**
 * First-fit allocator of aligned extents inside {@code [0, capacityBytes)} with coalescing of free
 * neighbours. Chosen over slab classes because KV block sizes are set by the engine (often one size per
 * model, but not known in advance), so slabs would either waste memory or need tuning per deployment.
 *
 * <p>Fragmentation behaviour: free extents are merged with both neighbours on release, so the free list
 * never holds two adjacent extents; an allocation can still fail while {@link #freeBytes()} is larger than
 * the request when no single extent is large enough. The DRAM tier then evicts further LRU blocks until a
 * contiguous extent appears (it may evict more bytes than requested; see {@link DramTier}). Allocation is
 * O(free extents), bounded by the number of resident blocks + 1. Not thread-safe: the owner's lock guards it.
 */
final class ExtentAllocator {
    /** Extents start and end on this boundary (a cache line), so blocks never share a line. */
    static final long ALIGNMENT_BYTES = 64;

    private final long capacityBytes;
    private final TreeMap<Long, Long> freeByOffset = new TreeMap<>();
    private long freeBytes;

    ExtentAllocator(long capacityBytes) {
        if (capacityBytes < ALIGNMENT_BYTES || capacityBytes % ALIGNMENT_BYTES != 0) {
            throw new IllegalArgumentException(
                    "allocator capacity must be a positive multiple of " + ALIGNMENT_BYTES + " bytes, got " + capacityBytes);
        }
        this.capacityBytes = capacityBytes;
        freeByOffset.put(0L, capacityBytes);
        freeBytes = capacityBytes;
    }

    /** The extent length used for a block of {@code sizeBytes} (at least one alignment unit). */
    static long extentBytes(long sizeBytes) {
        if (sizeBytes < 0) {
            throw new IllegalArgumentException("size must be >= 0 bytes, got " + sizeBytes);
        }
        long units = Math.max(1, (sizeBytes + ALIGNMENT_BYTES - 1) / ALIGNMENT_BYTES);
        return units * ALIGNMENT_BYTES;
    }

    /** The offset of a new extent of {@code extentBytes} (aligned), or {@code -1} if no free extent is large enough. */
    long allocate(long extentBytes) {
        requireAligned(extentBytes);
        for (Map.Entry<Long, Long> free : freeByOffset.entrySet()) {
            if (free.getValue() >= extentBytes) {
                long offset = free.getKey();
                long rest = free.getValue() - extentBytes;
                freeByOffset.remove(offset);
                if (rest > 0) {
                    freeByOffset.put(offset + extentBytes, rest);
                }
                freeBytes -= extentBytes;
                return offset;
            }
        }
        return -1;
    }

    /**
     * Returns an extent; merges it with free neighbours.
     *
     * @throws IllegalStateException if the extent overlaps a free one (double free) or lies outside the capacity
     */
    void free(long offset, long extentBytes) {
        requireAligned(extentBytes);
        if (offset < 0 || offset % ALIGNMENT_BYTES != 0 || offset + extentBytes > capacityBytes) {
            throw new IllegalStateException("extent [" + offset + ", +" + extentBytes + ") is outside the arena of "
                    + capacityBytes + " bytes or misaligned");
        }
        Map.Entry<Long, Long> before = freeByOffset.floorEntry(offset);
        Map.Entry<Long, Long> after = freeByOffset.ceilingEntry(offset);
        if ((before != null && before.getKey() + before.getValue() > offset)
                || (after != null && offset + extentBytes > after.getKey())) {
            throw new IllegalStateException("double free of extent [" + offset + ", +" + extentBytes + ")");
        }
        long start = offset;
        long length = extentBytes;
        if (before != null && before.getKey() + before.getValue() == offset) {
            start = before.getKey();
            length += before.getValue();
            freeByOffset.remove(before.getKey());
        }
        if (after != null && offset + extentBytes == after.getKey()) {
            length += after.getValue();
            freeByOffset.remove(after.getKey());
        }
        freeByOffset.put(start, length);
        freeBytes += extentBytes;
    }

    long freeBytes() {
        return freeBytes;
    }

    long capacityBytes() {
        return capacityBytes;
    }

    /** The largest contiguous free extent. */
    long largestFreeExtentBytes() {
        long max = 0;
        for (long length : freeByOffset.values()) {
            max = Math.max(max, length);
        }
        return max;
    }

    /** The number of free extents (1 when empty; grows with fragmentation). */
    int freeExtentCount() {
        return freeByOffset.size();
    }

    private static void requireAligned(long extentBytes) {
        if (extentBytes <= 0 || extentBytes % ALIGNMENT_BYTES != 0) {
            throw new IllegalArgumentException(
                    "extent must be a positive multiple of " + ALIGNMENT_BYTES + " bytes, got " + extentBytes);
        }
    }
}
