package orbitkv.transfer;

import java.util.Arrays;

/**
 * A snapshot of a READ latency histogram with fixed bucket bounds ({@link #UPPER_BOUNDS_NANOS}: 16 µs doubling
 * to about 4.3 s, then +Inf). Counts are per bucket, not cumulative; the last count is the +Inf bucket. Plain
 * numbers, so the Manager adapts them to its metrics registry without this module depending on one.
 *
 * @param counts one count per bound plus the +Inf bucket
 * @param count total observations
 * @param sumNanos sum of observations
 */
public record LatencyHistogram(long[] counts, long count, long sumNanos) {
    /** Upper bounds (inclusive) of the finite buckets, nanoseconds: 2^14 .. 2^32 ns (16.4 µs .. 4.29 s). */
    private static final long[] BOUNDS = bounds();

    /** The number of finite buckets (19); {@link #counts()} has one more, the +Inf bucket. */
    public static final int FINITE_BUCKETS = BOUNDS.length;

    public LatencyHistogram {
        counts = counts.clone();
        if (counts.length != BOUNDS.length + 1) {
            throw new IllegalArgumentException("counts must have " + (BOUNDS.length + 1) + " entries, got " + counts.length);
        }
        if (count < 0 || sumNanos < 0) {
            throw new IllegalArgumentException("count and sumNanos must be >= 0");
        }
    }

    /** An empty histogram. */
    public static LatencyHistogram empty() {
        return new LatencyHistogram(new long[BOUNDS.length + 1], 0, 0);
    }

    /** The finite upper bounds in nanoseconds (a copy). */
    public static long[] upperBoundsNanos() {
        return BOUNDS.clone();
    }

    /** The index of the bucket that counts {@code nanos}. */
    public static int bucketOf(long nanos) {
        for (int i = 0; i < BOUNDS.length; i++) {
            if (nanos <= BOUNDS[i]) {
                return i;
            }
        }
        return BOUNDS.length;
    }

    @Override
    public long[] counts() {
        return counts.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LatencyHistogram h && count == h.count && sumNanos == h.sumNanos
                && Arrays.equals(counts, h.counts);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(counts) + Long.hashCode(count);
    }

    @Override
    public String toString() {
        return "LatencyHistogram[count=" + count + ", sumNanos=" + sumNanos + ", counts=" + Arrays.toString(counts) + "]";
    }

    private static long[] bounds() {
        long[] b = new long[19];
        for (int i = 0; i < b.length; i++) {
            b[i] = 1L << (14 + i);
        }
        return b;
    }
}
