package orbitkv.server.restore;

import io.netty.buffer.ByteBufAllocator;
import java.util.Map;
import orbitkv.recovery.RouteBlock;
import orbitkv.recovery.RouteSource;
import orbitkv.server.config.SpeculationOptions;
import orbitkv.server.tier.LocalTiers;

/**
 * This Manager's S7 work (issue 40; ROUTE-12, ROUTE-13), one per served API: {@link Retention} of fetched blocks
 * ({@code store_local}), declared-demand {@link Prefetcher prefetch}, and the {@link PrefetchLedger} of what prefetch
 * brought and what restores used. A restore tells it when demand begins and ends (speculation pauses meanwhile) and
 * what it delivered ({@link #delivered}).
 */
public final class Speculation implements AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Speculation.class);

    private final LocalTiers tiers;
    private final Retention retention;
    private final PrefetchLedger ledger;
    private final Prefetcher prefetcher;

    public Speculation(LocalTiers tiers, SpeculationOptions options, ByteBufAllocator alloc) {
        this.tiers = tiers;
        this.retention = new Retention(tiers, options.retainCopyCostPercent());
        this.ledger = new PrefetchLedger(options.prefetchKeysQueuedMax());
        this.prefetcher = new Prefetcher(tiers, retention, ledger, options.prefetchKeysQueuedMax(), alloc);
    }

    /** Queues a declared demand; what happened to each key, by outcome. */
    public Map<Prefetcher.KeyOutcome, Integer> prefetch(PrefetchRequest req, RestoreView view) {
        return prefetcher.submit(req, view);
    }

    void demandBegins() {
        prefetcher.demandBegins();
    }

    void demandEnds() {
        prefetcher.demandEnds();
    }

    /**
     * A route's records were delivered: a locally served block that a prefetch brought is used; with
     * {@code storeLocal}, a block READ from a peer (verified by the engine, INV-2) is offered to {@link Retention}.
     */
    void delivered(RestoreRecords rec, boolean storeLocal) {
        boolean peer = rec.route.source() instanceof RouteSource.Peer;
        for (int b = 0; b < rec.records.size(); b++) {
            RouteBlock block = rec.route.blocks().get(b);
            if (!peer) {
                ledger.served(block.key());
            } else if (storeLocal) {
                try {
                    retention.keep(block.key(), rec.verifiedPayload(b), Retention.Cause.STORE_LOCAL);
                } catch (RuntimeException e) { // a tier failure: the block is not kept, the restore unaffected
                    LOG.warn("retention of {} failed: {}", block.key().keyHex(), e.toString());
                }
            }
        }
    }

    /** One snapshot of every counter (metrics, status). */
    public Figures figures() {
        ledger.sweep(tiers);
        long[] l = ledger.figures();
        return new Figures(retention.figures(), prefetcher.figures(), l[0], l[1], l[2], l[3], l[4], l[5], (int) l[6]);
    }

    /**
     * Retention and prefetch figures.
     *
     * @param tracked prefetched blocks neither used nor wasted yet
     */
    public record Figures(Retention.Figures retention, Prefetcher.Figures prefetch, long prefetchedBlocks,
            long prefetchedBytes, long usedBlocks, long usedBytes, long wastedBlocks, long wastedBytes, int tracked) {}

    @Override
    public void close() {
        prefetcher.close();
    }
}
