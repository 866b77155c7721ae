package orbitkv.index;

/**
 * Counts of lock hold times per bucket (DIAG-3, IDX-1). Bucket {@code i} counts holds of at most
 * {@code upperBoundsNanos[i]} and more than the previous bound; the last bound is {@code Long.MAX_VALUE}.
 *
 * @param upperBoundsNanos inclusive upper bounds, increasing
 * @param counts one count per bucket
 */
public record LockHoldSnapshot(long[] upperBoundsNanos, long[] counts) {
    public LockHoldSnapshot {
        if (upperBoundsNanos.length != counts.length) {
            throw new IllegalArgumentException("bounds and counts must have the same length");
        }
        upperBoundsNanos = upperBoundsNanos.clone();
        counts = counts.clone();
    }

    public long total() {
        long t = 0;
        for (long c : counts) {
            t += c;
        }
        return t;
    }

    /** The upper bound of the bucket holding quantile {@code q} (0..1); 0 when empty. */
    public long quantileUpperBoundNanos(double q) {
        long total = total();
        if (total == 0) {
            return 0;
        }
        long rank = (long) Math.ceil(q * total);
        long seen = 0;
        for (int i = 0; i < counts.length; i++) {
            seen += counts[i];
            if (seen >= Math.max(rank, 1)) {
                return upperBoundsNanos[i];
            }
        }
        return upperBoundsNanos[upperBoundsNanos.length - 1];
    }

    @Override
    public long[] upperBoundsNanos() {
        return upperBoundsNanos.clone();
    }

    @Override
    public long[] counts() {
        return counts.clone();
    }
}
