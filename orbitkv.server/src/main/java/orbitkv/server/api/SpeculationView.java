package orbitkv.server.api;

import java.util.Map;
import java.util.TreeMap;
import orbitkv.server.restore.Prefetcher;
import orbitkv.server.restore.Retention;
import orbitkv.server.restore.Speculation;

/**
 * The {@code speculation} part of {@code /cache/metadata/status} (issue 40; ROUTE-12, ROUTE-13): blocks kept by
 * retention (by cause: {@code store-local}, {@code prefetch}) and its refusals by reason; declared prefetch keys by
 * outcome, prefetched, used and wasted blocks and bytes, refusals by reason, batches paused by demand, and the
 * speculation budget (5 % of the receive window) held now.
 */
public record SpeculationView(Map<String, Long> keptBlocks, Map<String, Long> keptBytes, Map<String, Long> retentionRefusals,
                              Map<String, Long> prefetchKeys, long prefetchedBlocks, long prefetchedBytes, long usedBlocks,
                              long usedBytes, long wastedBlocks, long wastedBytes, int tracked,
                              Map<String, Long> prefetchRefusals, long paused, long jobsStarted, int keysPending,
                              int jobsRunning, long budgetHeldBytes, long budgetBytesMax) {
    public SpeculationView {
        keptBlocks = java.util.Collections.unmodifiableMap(new TreeMap<>(keptBlocks));
        keptBytes = java.util.Collections.unmodifiableMap(new TreeMap<>(keptBytes));
        retentionRefusals = java.util.Collections.unmodifiableMap(new TreeMap<>(retentionRefusals));
        prefetchKeys = java.util.Collections.unmodifiableMap(new TreeMap<>(prefetchKeys));
        prefetchRefusals = java.util.Collections.unmodifiableMap(new TreeMap<>(prefetchRefusals));
    }

    /** The view of one snapshot. */
    public static SpeculationView of(Speculation.Figures f) {
        Retention.Figures r = f.retention();
        Prefetcher.Figures p = f.prefetch();
        return new SpeculationView(names(r.keptBlocks()), names(r.keptBytes()), names(r.refusals()), names(p.keys()),
                f.prefetchedBlocks(), f.prefetchedBytes(), f.usedBlocks(), f.usedBytes(), f.wastedBlocks(),
                f.wastedBytes(), f.tracked(), names(p.refusals()), p.paused(), p.jobsStarted(), p.keysPending(),
                p.jobsRunning(), p.budgetHeldBytes(), p.budgetBytesMax());
    }

    /** The answer of {@code POST /cache/prefetch}: declared keys by outcome, and the figures after it. */
    public record PrefetchAnswer(int accepted, Map<String, Integer> keys, SpeculationView speculation) {
        public PrefetchAnswer {
            keys = java.util.Collections.unmodifiableMap(new TreeMap<>(keys));
        }

        public static PrefetchAnswer of(Map<Prefetcher.KeyOutcome, Integer> outcomes, Speculation.Figures f) {
            Map<String, Integer> keys = new TreeMap<>();
            outcomes.forEach((o, n) -> keys.put(o.traceName(), n));
            return new PrefetchAnswer(outcomes.getOrDefault(Prefetcher.KeyOutcome.ACCEPTED, 0), keys, SpeculationView.of(f));
        }
    }

    private static <E extends Enum<E>> Map<String, Long> names(Map<E, Long> counts) {
        Map<String, Long> out = new TreeMap<>();
        counts.forEach((k, v) -> out.put(k.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'), v));
        return out;
    }
}
