package orbitkv.inventory;

import java.util.Arrays;

/**
 * A snapshot of a histogram of durations in seconds (DIAG-3), for whoever owns the metrics registry to
 * expose (the Manager adapts it to Prometheus). Bucket {@code i} counts observations of at most
 * {@code upperBoundsSeconds[i]} and more than the previous bound; the last bound is
 * {@link Double#POSITIVE_INFINITY}, so every observation has a bucket.
 *
 * @param upperBoundsSeconds inclusive upper bounds, strictly increasing, the last one +Inf
 * @param counts one count per bucket, each {@code >= 0}
 * @param sumSeconds the sum of all observations
 */
public record SecondsHistogram(double[] upperBoundsSeconds, long[] counts, double sumSeconds) {
    public SecondsHistogram {
        if (upperBoundsSeconds.length == 0 || upperBoundsSeconds.length != counts.length) {
            throw new IllegalArgumentException("a histogram needs one count per bound and at least one bound, got "
                    + upperBoundsSeconds.length + " bounds and " + counts.length + " counts");
        }
        if (upperBoundsSeconds[upperBoundsSeconds.length - 1] != Double.POSITIVE_INFINITY) {
            throw new IllegalArgumentException("the last bound must be +Inf, got " + upperBoundsSeconds[upperBoundsSeconds.length - 1]);
        }
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] < 0) {
                throw new IllegalArgumentException("bucket " + i + " count must be >= 0, got " + counts[i]);
            }
            if (i > 0 && !(upperBoundsSeconds[i] > upperBoundsSeconds[i - 1])) {
                throw new IllegalArgumentException("bounds must increase: " + Arrays.toString(upperBoundsSeconds));
            }
        }
        upperBoundsSeconds = upperBoundsSeconds.clone();
        counts = counts.clone();
    }

    /** An empty histogram over {@code finiteBoundsSeconds} (increasing) and +Inf. */
    public static SecondsHistogram empty(double... finiteBoundsSeconds) {
        double[] bounds = Arrays.copyOf(finiteBoundsSeconds, finiteBoundsSeconds.length + 1);
        bounds[finiteBoundsSeconds.length] = Double.POSITIVE_INFINITY;
        return new SecondsHistogram(bounds, new long[bounds.length], 0);
    }

    /** Observations in all buckets. */
    public long count() {
        long total = 0;
        for (long c : counts) {
            total += c;
        }
        return total;
    }

    @Override
    public double[] upperBoundsSeconds() {
        return upperBoundsSeconds.clone();
    }

    @Override
    public long[] counts() {
        return counts.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SecondsHistogram h && Arrays.equals(upperBoundsSeconds, h.upperBoundsSeconds)
                && Arrays.equals(counts, h.counts) && Double.compare(sumSeconds, h.sumSeconds) == 0;
    }

    @Override
    public int hashCode() {
        return 31 * (31 * Arrays.hashCode(upperBoundsSeconds) + Arrays.hashCode(counts)) + Double.hashCode(sumSeconds);
    }

    @Override
    public String toString() {
        return "SecondsHistogram[bounds=" + Arrays.toString(upperBoundsSeconds) + ", counts=" + Arrays.toString(counts)
                + ", sum=" + sumSeconds + "]";
    }
}
