package orbitkv.server.metrics;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.function.Function;
import orbitkv.server.tier.CorruptionReason;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.SsdTier;
import orbitkv.server.tier.TierCounters;
import orbitkv.server.tier.TierRefusal;
import orbitkv.server.tier.TierUsage;

/**
 * The local tiers' metric families (DIAG-2: labels are the medium, a refusal or corruption reason, never a block):
 * usage and counters per medium, corruption found on reads, the SSD write queue, restore copy-out and the restore
 * arena. Read by callbacks at scrape time.
 */
public final class TierMetricFamilies {
    private TierMetricFamilies() {}

    /** The tiers' figures, read at scrape time: usage, counters, corruption, SSD queue, copy-out and restore arena. */
    public static void register(PrometheusRegistry registry, LocalTiers tiers) {
        tierGauge(registry, tiers, "orbitkv_tier_blocks", "resident blocks", u -> (double) u.blocks());
        tierGauge(registry, tiers, "orbitkv_tier_resident_bytes", "payload bytes of resident blocks", u -> (double) u.residentBytes());
        tierGauge(registry, tiers, "orbitkv_tier_capacity_bytes", "tier bound in bytes", u -> (double) u.capacityBytes());
        tierGauge(registry, tiers, "orbitkv_tier_allocated_bytes", "bytes taken incl. alignment and pinned retired blocks",
                u -> (double) u.allocatedBytes());
        tierGauge(registry, tiers, "orbitkv_tier_pins_held", "pins currently held", u -> (double) u.pinsHeld());
        tierCounter(registry, tiers, "orbitkv_tier_stored", "blocks stored", TierCounters::storedTotal);
        tierCounter(registry, tiers, "orbitkv_tier_evicted", "blocks evicted by LRU to make room", TierCounters::evictedTotal);
        tierCounter(registry, tiers, "orbitkv_tier_reads", "blocks pinned for reading", TierCounters::readsTotal);
        tierGauge(registry, tiers, "orbitkv_tier_pinned_bytes", "payload bytes currently pinned", u -> (double) u.pinnedBytes());
        tierGauge(registry, tiers, "orbitkv_tier_reserved_bytes", "bytes reserved by saves in progress (not yet visible)",
                u -> (double) u.reservedBytes());
        tierCounter(registry, tiers, "orbitkv_tier_evicted_pinned", "explicit evicts of pinned residences (bytes kept until the last unpin)",
                TierCounters::evictedPinnedTotal);
        tierCounter(registry, tiers, "orbitkv_tier_pinned_skipped_by_lru", "pinned residences passed over by LRU eviction",
                TierCounters::pinnedSkippedByLruTotal);
        tierCounter(registry, tiers, "orbitkv_tier_reservations_aborted", "save reservations freed without being stored",
                TierCounters::reservationsAbortedTotal);
        registerTierHealth(registry, tiers);
    }

    /** Corruption found on reads, the SSD write queue, restore copy-out and the restore arena. */
    private static void registerTierHealth(PrometheusRegistry registry, LocalTiers tiers) {
        CounterWithCallback.builder().name("orbitkv_tier_corrupt")
                .help("stored blocks found broken on a read (checksum, missing or truncated file); each was evicted")
                .labelNames("medium", "reason").callback(cb -> {
                    for (CorruptionReason r : CorruptionReason.values()) {
                        cb.call(tiers.dram().counters().corruptTotal(r), "DRAM", r.wireName());
                        if (tiers.ssd() != null) {
                            cb.call(tiers.ssd().counters().corruptTotal(r), "SSD", r.wireName());
                        }
                    }
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_tier_refused").help("tier refusals by reason (never silent loss)")
                .labelNames("medium", "reason").callback(cb -> {
                    for (TierRefusal r : TierRefusal.values()) {
                        cb.call(tiers.dram().counters().refusedTotal(r), "DRAM", r.name());
                        if (tiers.ssd() != null) {
                            cb.call(tiers.ssd().counters().refusedTotal(r), "SSD", r.name());
                        }
                    }
                }).register(registry);
        // issue 33: tier storage faults (the refusals themselves are in orbitkv_tier_refused_total)
        GaugeWithCallback.builder().name("orbitkv_tier_degraded")
                .help("1 while the tier's storage failed its last write (full tmpfs or disk, I/O error), else 0")
                .labelNames("medium").callback(cb -> {
                    cb.call(tiers.dram().faults().current().isPresent() ? 1 : 0, "DRAM");
                    if (tiers.ssd() != null) {
                        cb.call(tiers.ssd().faults().current().isPresent() ? 1 : 0, "SSD");
                    }
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_tier_write_faults")
                .help("writes the tier's storage failed (full tmpfs or disk, I/O error)")
                .labelNames("medium").callback(cb -> {
                    cb.call(tiers.dram().faults().faultsTotal(), "DRAM");
                    if (tiers.ssd() != null) {
                        cb.call(tiers.ssd().faults().faultsTotal(), "SSD");
                    }
                }).register(registry);
        SsdTier ssd = tiers.ssd();
        if (ssd != null) {
            GaugeWithCallback.builder().name("orbitkv_ssd_queue_writes").help("queued SSD writes")
                    .callback(cb -> cb.call(ssd.queueDepth()[0])).register(registry);
            GaugeWithCallback.builder().name("orbitkv_ssd_queue_bytes").help("queued SSD write bytes")
                    .callback(cb -> cb.call(ssd.queueDepth()[1])).register(registry);
            CounterWithCallback.builder().name("orbitkv_ssd_superseded_writes")
                    .help("queued SSD writes discarded because a newer save or an evict superseded them")
                    .callback(cb -> cb.call(ssd.supersededWrites())).register(registry);
        }
        GaugeWithCallback.builder().name("orbitkv_restore_response_bytes")
                .help("restore response bytes held (restore arena or direct memory), bounded by --restore-bytes-in-flight-max")
                .callback(cb -> cb.call(tiers.copyOut().heldBytes())).register(registry);
        CounterWithCallback.builder().name("orbitkv_restore_response_memory_refusals")
                .help("restores that stopped their prefix because --restore-bytes-in-flight-max was reached")
                .callback(cb -> cb.call(tiers.copyOut().refusalsTotal())).register(registry);
        tiers.restoreArena().ifPresent(arena -> {
            GaugeWithCallback.builder().name("orbitkv_restore_arena_held_bytes")
                    .help("restore arena bytes held by records not yet written (the arena is --restore-bytes-in-flight-max of tmpfs)")
                    .callback(cb -> cb.call(arena.heldBytes())).register(registry);
            GaugeWithCallback.builder().name("orbitkv_restore_arena_high_water_bytes")
                    .help("most restore arena bytes held at once: the arena pages touched so far")
                    .callback(cb -> cb.call(arena.highWaterBytes())).register(registry);
            CounterWithCallback.builder().name("orbitkv_restore_arena_fallbacks")
                    .help("restore records the arena could not place (fragmented free space); they used direct memory")
                    .callback(cb -> cb.call(arena.fallbacksTotal())).register(registry);
        });
        GaugeWithCallback.builder().name("orbitkv_inventory_head_sequence").help("latest residency sequence")
                .callback(cb -> cb.call(tiers.headSequence())).register(registry);
    }



    private static void tierGauge(PrometheusRegistry registry, LocalTiers tiers, String name, String help, Function<TierUsage, Double> value) {
        GaugeWithCallback.builder().name(name).help(help).labelNames("medium").callback(cb -> {
            cb.call(value.apply(tiers.dram().usage()), "DRAM");
            if (tiers.ssd() != null) {
                cb.call(value.apply(tiers.ssd().usage()), "SSD");
            }
        }).register(registry);
    }

    private static void tierCounter(PrometheusRegistry registry, LocalTiers tiers, String name, String help, Function<TierCounters, Long> value) {
        CounterWithCallback.builder().name(name).help(help).labelNames("medium").callback(cb -> {
            cb.call(value.apply(tiers.dram().counters()), "DRAM");
            if (tiers.ssd() != null) {
                cb.call(value.apply(tiers.ssd().counters()), "SSD");
            }
        }).register(registry);
    }
}
