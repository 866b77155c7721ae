package orbitkv.index.view;

import java.util.concurrent.atomic.AtomicLongArray;
import orbitkv.index.LockHoldSnapshot;

/**
 * A bounded, lock-free histogram of lock hold times (DIAG-3, IDX-1): power-of-two buckets from 128 ns
 * to about 1 s, plus one overflow bucket. Fixed memory; recording never allocates.
 */
final class LockHoldHistogram {
    private static final int FIRST_SHIFT = 7;
    private static final int BUCKETS = 25;
    private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);

    void record(long nanos) {
        long n = Math.max(1, nanos);
        int bit = 64 - Long.numberOfLeadingZeros(n - 1);
        int bucket = Math.min(BUCKETS - 1, Math.max(0, bit - FIRST_SHIFT));
        counts.incrementAndGet(bucket);
    }

    LockHoldSnapshot snapshot() {
        long[] bounds = new long[BUCKETS];
        long[] c = new long[BUCKETS];
        for (int i = 0; i < BUCKETS; i++) {
            bounds[i] = i == BUCKETS - 1 ? Long.MAX_VALUE : 1L << (FIRST_SHIFT + i);
            c[i] = counts.get(i);
        }
        return new LockHoldSnapshot(bounds, c);
    }
}
