package orbitkv.server.metrics;

import static orbitkv.server.metrics.MetricFamily.counter;
import static orbitkv.server.metrics.MetricFamily.gauge;

import java.util.List;
import orbitkv.server.restore.Speculation;

/**
 * Retention's and declared prefetch's families as data over one {@link Speculation.Figures} per scrape (issue 40;
 * ROUTE-12, ROUTE-13, DIAG-2): every label value is a closed enum's trace name.
 */
public final class SpeculationMetricFamilies {
    public static final List<MetricFamily<Speculation.Figures>> FAMILIES = List.of(
            counter("orbitkv_retention_kept_blocks", "fetched blocks kept in the local DRAM tier, by cause (store-local,"
                    + " prefetch)", List.of("cause"),
                    (f, out) -> f.retention().keptBlocks().forEach((c, n) -> out.value(n, c.traceName()))),
            counter("orbitkv_retention_kept_bytes", "payload bytes of kept blocks, by cause", List.of("cause"),
                    (f, out) -> f.retention().keptBytes().forEach((c, n) -> out.value(n, c.traceName()))),
            counter("orbitkv_retention_refusals", "fetched blocks not kept, by reason (already-local, no-reuse-benefit,"
                    + " no-evictable-space, block-exceeds-tier, closed, backing-store-full, other)", List.of("reason"),
                    (f, out) -> f.retention().refusals().forEach((r, n) -> out.value(n, r.traceName()))),
            counter("orbitkv_prefetch_keys", "declared prefetch keys, by outcome at declaration (accepted, local,"
                    + " no-replica, duplicate, queue-full, standalone)", List.of("outcome"),
                    (f, out) -> f.prefetch().keys().forEach((o, n) -> out.value(n, o.traceName()))),
            counter("orbitkv_prefetch_blocks", "prefetched blocks kept, then used by a restore or wasted (evicted or"
                    + " untracked unused)", List.of("state"), (f, out) -> {
                        out.value(f.prefetchedBlocks(), "prefetched");
                        out.value(f.usedBlocks(), "used");
                        out.value(f.wastedBlocks(), "wasted");
                    }),
            counter("orbitkv_prefetch_bytes", "payload bytes of prefetched, used and wasted blocks", List.of("state"),
                    (f, out) -> {
                        out.value(f.prefetchedBytes(), "prefetched");
                        out.value(f.usedBytes(), "used");
                        out.value(f.wastedBytes(), "wasted");
                    }),
            counter("orbitkv_prefetch_refusals", "accepted prefetch keys not fetched, by reason (expired,"
                    + " block-exceeds-budget, receive-credits, source-gone, authorize-refused, read-failed, not-kept,"
                    + " closed)", List.of("reason"),
                    (f, out) -> f.prefetch().refusals().forEach((r, n) -> out.value(n, r.traceName()))),
            counter("orbitkv_prefetch_paused", "prefetch jobs stopped before their next batch by demand (a restore)",
                    f -> f.prefetch().paused()),
            counter("orbitkv_prefetch_jobs", "prefetch jobs started (at most one per peer at a time)",
                    f -> f.prefetch().jobsStarted()),
            gauge("orbitkv_prefetch_keys_pending", "prefetch keys queued or in flight", f -> f.prefetch().keysPending()),
            gauge("orbitkv_prefetch_jobs_running", "prefetch jobs running", f -> f.prefetch().jobsRunning()),
            gauge("orbitkv_prefetch_budget_held_bytes", "bytes of the speculation budget (5 % of the receive window)"
                    + " held by running jobs", f -> f.prefetch().budgetHeldBytes()),
            gauge("orbitkv_prefetch_tracked_blocks", "prefetched blocks neither used nor wasted yet", f -> f.tracked()));

    private SpeculationMetricFamilies() {}
}
