package orbitkv.server.tier;

import orbitkv.inventory.Medium;

/**
 * Point-in-time figures of one tier.
 *
 * @param medium the tier
 * @param blocks resident blocks
 * @param residentBytes payload bytes of resident blocks
 * @param capacityBytes the tier bound
 * @param allocatedBytes bytes taken (DRAM: aligned extents incl. reservations and retired-but-pinned blocks;
 *     SSD: resident file bytes)
 * @param reservedBytes bytes reserved by saves in progress (invisible to reads and eviction until committed)
 * @param pinsHeld pins currently held (readers and write-through)
 * @param pinsMax the reader pin count bound
 * @param pinnedBytes payload bytes currently pinned
 * @param pinnedBytesMax the reader pinned-bytes bound
 */
public record TierUsage(Medium medium, long blocks, long residentBytes, long capacityBytes, long allocatedBytes,
                        long reservedBytes, int pinsHeld, int pinsMax, long pinnedBytes, long pinnedBytesMax) {}
