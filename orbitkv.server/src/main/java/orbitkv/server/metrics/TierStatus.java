package orbitkv.server.metrics;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import orbitkv.server.tier.CorruptionReason;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.SsdTier;
import orbitkv.server.tier.TierCounters;
import orbitkv.server.tier.TierRefusal;
import orbitkv.server.tier.TierUsage;

/**
 * The local tiers at one scrape (issue 34 item 2): what {@link TierMetricFamilies} reads, taken once.
 *
 * @param media DRAM, then SSD when configured
 * @param ssdQueue the SSD write queue, when an SSD tier is configured
 * @param copyOutHeldBytes restore response bytes held
 * @param copyOutRefusals restores stopped by --restore-bytes-in-flight-max
 * @param arena the restore arena, when one is mapped
 * @param headSequence the latest residency sequence
 */
public record TierStatus(List<Medium> media, Optional<SsdQueue> ssdQueue, long copyOutHeldBytes, long copyOutRefusals,
                         Optional<Arena> arena, long headSequence) {
    /** One tier: usage, counter totals, refusals and corruption by reason, its storage fault state. */
    public record Medium(String name, TierUsage usage, Counters counters, Map<TierRefusal, Long> refused,
                         Map<CorruptionReason, Long> corrupt, boolean degraded, long writeFaults) {}

    /** A tier's counter totals at the scrape. */
    public record Counters(long stored, long evicted, long reads, long evictedPinned, long pinnedSkippedByLru,
                           long reservationsAborted) {
        static Counters of(TierCounters c) {
            return new Counters(c.storedTotal(), c.evictedTotal(), c.readsTotal(), c.evictedPinnedTotal(),
                    c.pinnedSkippedByLruTotal(), c.reservationsAbortedTotal());
        }
    }

    public record SsdQueue(long writes, long bytes, long supersededWrites) {}

    public record Arena(long heldBytes, long highWaterBytes, long fallbacks) {}

    public TierStatus {
        media = List.copyOf(media);
    }

    /** Reads the tiers once. */
    public static TierStatus of(LocalTiers tiers) {
        List<Medium> media = new ArrayList<>(2);
        media.add(medium("DRAM", tiers.dram().usage(), tiers.dram().counters(), tiers.dram().faults()));
        SsdTier ssd = tiers.ssd();
        Optional<SsdQueue> queue = Optional.empty();
        if (ssd != null) {
            media.add(medium("SSD", ssd.usage(), ssd.counters(), ssd.faults()));
            long[] depth = ssd.queueDepth();
            queue = Optional.of(new SsdQueue(depth[0], depth[1], ssd.supersededWrites()));
        }
        Optional<Arena> arena = tiers.restoreArena()
                .map(a -> new Arena(a.heldBytes(), a.highWaterBytes(), a.fallbacksTotal()));
        return new TierStatus(media, queue, tiers.copyOut().heldBytes(), tiers.copyOut().refusalsTotal(), arena,
                tiers.headSequence());
    }

    private static Medium medium(String name, TierUsage usage, TierCounters c, orbitkv.server.tier.TierFaults faults) {
        Map<TierRefusal, Long> refused = new EnumMap<>(TierRefusal.class);
        for (TierRefusal r : TierRefusal.values()) {
            refused.put(r, c.refusedTotal(r));
        }
        Map<CorruptionReason, Long> corrupt = new EnumMap<>(CorruptionReason.class);
        for (CorruptionReason r : CorruptionReason.values()) {
            corrupt.put(r, c.corruptTotal(r));
        }
        return new Medium(name, usage, Counters.of(c), refused, corrupt, faults.current().isPresent(), faults.faultsTotal());
    }
}
