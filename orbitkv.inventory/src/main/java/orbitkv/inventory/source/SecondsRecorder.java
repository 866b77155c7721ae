package orbitkv.inventory.source;

import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import orbitkv.inventory.SecondsHistogram;

/**
 * A thread-safe, fixed-bucket recorder of durations (DIAG-3) whose state leaves only as a
 * {@link SecondsHistogram} snapshot: the metrics registry belongs to the Manager, not to this module.
 * Bounded: one adder per bucket, fixed at construction. Used by the coalescing windows and the session ends.
 */
public final class SecondsRecorder {
    /** The Prometheus client's default classic bounds (seconds), kept so exposed buckets do not change. */
    public static final double[] DEFAULT_BOUNDS_SECONDS = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

    private final double[] bounds;
    private final LongAdder[] counts;
    private final DoubleAdder sum = new DoubleAdder();

    /** @param finiteBoundsSeconds increasing finite upper bounds; a last +Inf bucket is added */
    public SecondsRecorder(double... finiteBoundsSeconds) {
        this.bounds = SecondsHistogram.empty(finiteBoundsSeconds).upperBoundsSeconds(); // validates the bounds
        this.counts = new LongAdder[bounds.length];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
    }

    /** Records one duration; a negative one (a clock step) counts as 0. */
    public void observe(double seconds) {
        double s = Math.max(0, seconds);
        int i = 0;
        while (s > bounds[i]) {
            i++; // terminates: the last bound is +Inf
        }
        counts[i].increment();
        sum.add(s);
    }

    /** Records {@code nanos} nanoseconds. */
    public void observeNanos(long nanos) {
        observe(nanos / 1e9);
    }

    /** The current counts; concurrent observations may land in the next snapshot only. */
    public SecondsHistogram snapshot() {
        long[] c = new long[counts.length];
        for (int i = 0; i < c.length; i++) {
            c[i] = counts[i].sum();
        }
        return new SecondsHistogram(bounds, c, sum.sum());
    }
}
