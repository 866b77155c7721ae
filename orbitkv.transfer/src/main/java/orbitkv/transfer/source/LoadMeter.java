package orbitkv.transfer.source;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import orbitkv.membership.Incarnation;
import orbitkv.transfer.SourceLoad;

/**
 * The source's load summary (ROUTE-9): peaks of three gauges (grants outstanding, pinned bytes, egress bytes in
 * flight) over a tumbling window of {@value #WINDOW_MS} ms, sampled on every Authorize answer and every expiry
 * sweep. {@link #summary} samples once more and reports the current window's peaks with the window's length so
 * far (at least 1 ms), so a summary never describes a period longer than its window and never predates it.
 *
 * <p>Fixed size: three longs and a window start. Thread-safe (the answer runs on the gRPC executor, the sweep on
 * a data-plane event loop); both hold the lock for a few field updates.
 */
final class LoadMeter {
    /** The measurement window: a summary describes at most this much of the source's recent past. */
    static final long WINDOW_MS = 1_000;

    private final LongSupplier grantsOutstanding;
    private final LongSupplier pinnedBytes;
    private final LongSupplier egressQueuedBytes;
    private final LongSupplier monotonicNanos;
    private long windowStartNanos;
    private long grantsPeak;
    private long pinnedPeak;
    private long egressPeak;

    /** A meter of the three gauges (read at each sample) on the source's monotonic clock. */
    LoadMeter(LongSupplier grantsOutstanding, LongSupplier pinnedBytes, LongSupplier egressQueuedBytes,
            LongSupplier monotonicNanos) {
        this.grantsOutstanding = grantsOutstanding;
        this.pinnedBytes = pinnedBytes;
        this.egressQueuedBytes = egressQueuedBytes;
        this.monotonicNanos = monotonicNanos;
        this.windowStartNanos = monotonicNanos.getAsLong();
    }

    /** Folds the gauges' current values into the window (starting a new one when the current one is over). */
    synchronized void sample() {
        long now = monotonicNanos.getAsLong();
        if (now - windowStartNanos >= TimeUnit.MILLISECONDS.toNanos(WINDOW_MS)) {
            windowStartNanos = now;
            grantsPeak = 0;
            pinnedPeak = 0;
            egressPeak = 0;
        }
        grantsPeak = Math.max(grantsPeak, grantsOutstanding.getAsLong());
        pinnedPeak = Math.max(pinnedPeak, pinnedBytes.getAsLong());
        egressPeak = Math.max(egressPeak, egressQueuedBytes.getAsLong());
    }

    /** Samples, then returns the current window's peaks, measured by {@code self}. */
    synchronized SourceLoad summary(Incarnation self) {
        sample();
        long windowMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(monotonicNanos.getAsLong() - windowStartNanos));
        return new SourceLoad(self, Math.min(windowMs, WINDOW_MS), (int) Math.min(Integer.MAX_VALUE, grantsPeak),
                pinnedPeak, egressPeak);
    }
}
