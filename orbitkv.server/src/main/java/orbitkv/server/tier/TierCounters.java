package orbitkv.server.tier;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/** Monotonic counters of one tier, read by /metrics (DIAG-3: named refusal counters, never silent loss). */
public final class TierCounters {
    private final LongAdder stored = new LongAdder();
    private final LongAdder evicted = new LongAdder();
    private final LongAdder reads = new LongAdder();
    private final AtomicLongArray refusals = new AtomicLongArray(TierRefusal.values().length);

    void stored() {
        stored.increment();
    }

    void evicted() {
        evicted.increment();
    }

    void read() {
        reads.increment();
    }

    void refused(TierRefusal reason) {
        refusals.incrementAndGet(reason.ordinal());
    }

    public long storedTotal() {
        return stored.sum();
    }

    public long evictedTotal() {
        return evicted.sum();
    }

    public long readsTotal() {
        return reads.sum();
    }

    public long refusedTotal(TierRefusal reason) {
        return refusals.get(reason.ordinal());
    }
}
