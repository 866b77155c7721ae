package orbitkv.server.restore;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import orbitkv.inventory.StateKey;
import orbitkv.server.tier.LocalTiers;

/**
 * What declared prefetch brought and what became of it (ROUTE-13): a block kept by a prefetch is tracked until a
 * restore serves it locally ({@code used}) or it is no longer resident, or pushed out of the bounded tracking by newer
 * prefetches ({@code wasted}). The tracking holds at most {@code --prefetch-keys-queued-max} blocks (INV-9).
 */
final class PrefetchLedger {
    private final int trackedMax;
    private final LinkedHashMap<StateKey, Long> tracked = new LinkedHashMap<>();
    private long prefetchedBlocks;
    private long prefetchedBytes;
    private long usedBlocks;
    private long usedBytes;
    private long wastedBlocks;
    private long wastedBytes;

    PrefetchLedger(int trackedMax) {
        if (trackedMax < 1) {
            throw new IllegalArgumentException("trackedMax must be >= 1, got " + trackedMax);
        }
        this.trackedMax = trackedMax;
    }

    /** A prefetched block was kept; the eldest tracked block is counted wasted when the tracking is full. */
    synchronized void prefetched(StateKey key, long bytes) {
        if (!tracked.containsKey(key) && tracked.size() >= trackedMax) {
            Iterator<Map.Entry<StateKey, Long>> eldest = tracked.entrySet().iterator();
            wasted(eldest.next().getValue());
            eldest.remove();
        }
        Long before = tracked.put(key, bytes);
        if (before != null) {
            wasted(before); // kept again after it was lost unnoticed: the first copy was never used
        }
        prefetchedBlocks++;
        prefetchedBytes += bytes;
    }

    /** A restore served {@code key} locally: a prefetched block is used once. */
    synchronized void served(StateKey key) {
        Long bytes = tracked.remove(key);
        if (bytes != null) {
            usedBlocks++;
            usedBytes += bytes;
        }
    }

    /** Every tracked block no longer resident in {@code tiers} was evicted unused: wasted. */
    synchronized void sweep(LocalTiers tiers) {
        Iterator<Map.Entry<StateKey, Long>> it = tracked.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<StateKey, Long> e = it.next();
            if (tiers.residences(e.getKey()).isEmpty()) {
                wasted(e.getValue());
                it.remove();
            }
        }
    }

    private void wasted(long bytes) {
        wastedBlocks++;
        wastedBytes += bytes;
    }

    /** prefetched, used, wasted (blocks then bytes), and the blocks still tracked. */
    synchronized long[] figures() {
        return new long[] {prefetchedBlocks, prefetchedBytes, usedBlocks, usedBytes, wastedBlocks, wastedBytes,
                tracked.size()};
    }
}
