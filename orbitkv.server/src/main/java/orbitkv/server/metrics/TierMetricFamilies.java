package orbitkv.server.metrics;

import static orbitkv.server.metrics.MetricFamily.counter;
import static orbitkv.server.metrics.MetricFamily.gauge;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.TierUsage;

/**
 * The local tiers' families as data over one {@link TierStatus} per scrape (DIAG-2: labels are the medium, a refusal
 * or corruption reason, never a block): usage and counters per medium, corruption found on reads, storage faults,
 * the SSD write queue, restore copy-out and the restore arena.
 */
public final class TierMetricFamilies {
    private static final List<String> MEDIUM = List.of("medium");

    private TierMetricFamilies() {}

    /** Adds the tiers' part to {@code metrics}: a {@link TierStatus} read once per scrape. */
    public static void register(ManagerMetrics metrics, LocalTiers tiers) {
        metrics.add(() -> TierStatus.of(tiers), families(tiers.ssd() != null, tiers.restoreArena().isPresent()));
    }

    /** The families; the SSD queue's and the arena's exist only with an SSD tier and a restore arena. */
    static List<MetricFamily<TierStatus>> families(boolean ssd, boolean arena) {
        List<MetricFamily<TierStatus>> f = new ArrayList<>(List.of(
                usage("orbitkv_tier_blocks", "resident blocks", TierUsage::blocks),
                usage("orbitkv_tier_resident_bytes", "payload bytes of resident blocks", TierUsage::residentBytes),
                usage("orbitkv_tier_capacity_bytes", "tier bound in bytes", TierUsage::capacityBytes),
                usage("orbitkv_tier_allocated_bytes", "bytes taken incl. alignment and pinned retired blocks",
                        TierUsage::allocatedBytes),
                usage("orbitkv_tier_pins_held", "pins currently held", TierUsage::pinsHeld),
                counted("orbitkv_tier_stored", "blocks stored", c -> c.stored()),
                counted("orbitkv_tier_evicted", "blocks evicted by LRU to make room", c -> c.evicted()),
                counted("orbitkv_tier_reads", "blocks pinned for reading", c -> c.reads()),
                usage("orbitkv_tier_pinned_bytes", "payload bytes currently pinned", TierUsage::pinnedBytes),
                usage("orbitkv_tier_reserved_bytes", "bytes reserved by saves in progress (not yet visible)",
                        TierUsage::reservedBytes),
                counted("orbitkv_tier_evicted_pinned", "explicit evicts of pinned residences (bytes kept until the last unpin)",
                        c -> c.evictedPinned()),
                counted("orbitkv_tier_pinned_skipped_by_lru", "pinned residences passed over by LRU eviction",
                        c -> c.pinnedSkippedByLru()),
                counted("orbitkv_tier_reservations_aborted", "save reservations freed without being stored",
                        c -> c.reservationsAborted())));
        f.addAll(health());
        if (ssd) {
            f.add(gauge("orbitkv_ssd_queue_writes", "queued SSD writes", s -> s.ssdQueue().orElseThrow().writes()));
            f.add(gauge("orbitkv_ssd_queue_bytes", "queued SSD write bytes", s -> s.ssdQueue().orElseThrow().bytes()));
            f.add(counter("orbitkv_ssd_superseded_writes",
                    "queued SSD writes discarded because a newer save or an evict superseded them",
                    s -> s.ssdQueue().orElseThrow().supersededWrites()));
        }
        f.add(gauge("orbitkv_restore_response_bytes",
                "restore response bytes held (restore arena or direct memory), bounded by --restore-bytes-in-flight-max",
                TierStatus::copyOutHeldBytes));
        f.add(counter("orbitkv_restore_response_memory_refusals",
                "restores that stopped their prefix because --restore-bytes-in-flight-max was reached",
                TierStatus::copyOutRefusals));
        if (arena) {
            f.add(gauge("orbitkv_restore_arena_held_bytes",
                    "restore arena bytes held by records not yet written (the arena is --restore-bytes-in-flight-max of tmpfs)",
                    s -> s.arena().orElseThrow().heldBytes()));
            f.add(gauge("orbitkv_restore_arena_high_water_bytes",
                    "most restore arena bytes held at once: the arena pages touched so far",
                    s -> s.arena().orElseThrow().highWaterBytes()));
            f.add(counter("orbitkv_restore_arena_fallbacks",
                    "restore records the arena could not place (fragmented free space); they used direct memory",
                    s -> s.arena().orElseThrow().fallbacks()));
        }
        f.add(gauge("orbitkv_inventory_head_sequence", "latest residency sequence", TierStatus::headSequence));
        return List.copyOf(f);
    }

    /** Corruption found on reads, refusals, and storage faults (issue 33), per medium. */
    private static List<MetricFamily<TierStatus>> health() {
        return List.of(
                counter("orbitkv_tier_corrupt",
                        "stored blocks found broken on a read (checksum, missing or truncated file); each was evicted",
                        List.of("medium", "reason"), (s, out) -> s.media().forEach(m -> m.corrupt()
                                .forEach((r, n) -> out.value(n, m.name(), r.wireName())))),
                counter("orbitkv_tier_refused", "tier refusals by reason (never silent loss)", List.of("medium", "reason"),
                        (s, out) -> s.media().forEach(m -> m.refused().forEach((r, n) -> out.value(n, m.name(), r.name())))),
                gauge("orbitkv_tier_degraded",
                        "1 while the tier's storage failed its last write (full tmpfs or disk, I/O error), else 0", MEDIUM,
                        (s, out) -> s.media().forEach(m -> out.value(m.degraded() ? 1 : 0, m.name()))),
                counter("orbitkv_tier_write_faults", "writes the tier's storage failed (full tmpfs or disk, I/O error)",
                        MEDIUM, (s, out) -> s.media().forEach(m -> out.value(m.writeFaults(), m.name()))));
    }

    private static MetricFamily<TierStatus> usage(String name, String help, ToDoubleFunction<TierUsage> value) {
        return gauge(name, help, MEDIUM, (s, out) -> s.media().forEach(m -> out.value(value.applyAsDouble(m.usage()), m.name())));
    }

    private static MetricFamily<TierStatus> counted(String name, String help,
                                                    ToDoubleFunction<TierStatus.Counters> value) {
        return counter(name, help, MEDIUM,
                (s, out) -> s.media().forEach(m -> out.value(value.applyAsDouble(m.counters()), m.name())));
    }
}
