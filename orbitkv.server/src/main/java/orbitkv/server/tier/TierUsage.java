package orbitkv.server.tier;

import orbitkv.inventory.Medium;

/**
 * Point-in-time figures of one tier.
 *
 * @param medium the tier
 * @param blocks resident blocks
 * @param residentBytes payload bytes of resident blocks
 * @param capacityBytes the tier bound
 * @param allocatedBytes bytes taken (DRAM: aligned extents incl. retired-but-pinned; SSD: resident file bytes)
 * @param pinsHeld pins currently held
 * @param pinsMax the pin bound
 */
public record TierUsage(Medium medium, long blocks, long residentBytes, long capacityBytes, long allocatedBytes,
                        int pinsHeld, int pinsMax) {}
