package orbitkv.conformance.index;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/** An injected monotonic clock (IDX-12 freshness is measured on it). */
final class ManualClock implements LongSupplier {
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

    @Override
    public long getAsLong() {
        return nanos.get();
    }

    void advanceMs(long ms) {
        nanos.addAndGet(ms * 1_000_000L);
    }
}
