package orbitkv.server.config;

import static orbitkv.server.config.Setting.PREFETCH_KEYS_QUEUED_MAX;
import static orbitkv.server.config.Setting.RETAIN_COPY_COST_PERCENT;

/**
 * The S7 options (issue 40; ROUTE-12, ROUTE-13): the cost weight of the retention estimate and the bound of declared
 * prefetch work. The prefetch byte budget is not an option: it is 5 % of {@code --transfer-receive-in-flight-bytes-max}
 * (the requester's qualified network budget), as the design fixes it.
 *
 * @param retainCopyCostPercent 0..100: copying a block into DRAM, in percent of fetching it again
 * @param prefetchKeysQueuedMax prefetch keys queued or in flight at once, and prefetched blocks tracked until used
 */
public record SpeculationOptions(int retainCopyCostPercent, int prefetchKeysQueuedMax) {
    /** The defaults of the two settings (a server started without a configuration: tests). */
    public static final SpeculationOptions DEFAULTS = new SpeculationOptions(10, 1024);
    /** The largest {@code --prefetch-keys-queued-max}. */
    public static final int PREFETCH_KEYS_QUEUED_LIMIT = 1_000_000;

    public SpeculationOptions {
        if (retainCopyCostPercent < 0 || retainCopyCostPercent > 100 || prefetchKeysQueuedMax < 1) {
            throw new IllegalArgumentException("retainCopyCostPercent must be 0..100 and prefetchKeysQueuedMax >= 1, got "
                    + retainCopyCostPercent + ", " + prefetchKeysQueuedMax);
        }
    }

    static SpeculationOptions parse(RawValues v) {
        return new SpeculationOptions(v.count(RETAIN_COPY_COST_PERCENT, 0, 100),
                v.count(PREFETCH_KEYS_QUEUED_MAX, 1, PREFETCH_KEYS_QUEUED_LIMIT));
    }
}
