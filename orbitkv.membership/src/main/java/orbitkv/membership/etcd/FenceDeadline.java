package orbitkv.membership.etcd;

import java.util.function.LongSupplier;

/**
 * The conservative local lease deadline (MEM-8, INV-7): {@code last confirmed renewal + TTL - margin} on
 * an injected monotonic clock. "Confirmed renewal" is the time the request was <em>sent</em> (etcd
 * restarts the TTL when it processes the request, which is later), so the local deadline never falls
 * after the real expiry. The deadline only moves forward; once {@link #passed()} is true the caller fences
 * irrevocably. Not thread-safe: owned by the renewal thread (reads of {@link #deadlineNanos()} from other
 * threads see a published volatile value).
 */
final class FenceDeadline {
    private final LongSupplier monotonicNanos;
    private final long marginNanos;
    private volatile long lastConfirmedSendNanos;
    private volatile long deadlineNanos;

    /**
     * @param monotonicNanos the clock ({@code System::nanoTime} in production)
     * @param grantSentNanos when the lease grant request was sent (the first confirmation)
     * @param grantedTtlMs the TTL etcd granted
     * @param marginMs the safety margin, {@code 0 <= margin < grantedTtlMs}
     */
    FenceDeadline(LongSupplier monotonicNanos, long grantSentNanos, long grantedTtlMs, long marginMs) {
        if (marginMs < 0 || marginMs >= grantedTtlMs) {
            throw new IllegalArgumentException("fence safety margin (" + marginMs
                    + " ms) must be >= 0 and < granted TTL (" + grantedTtlMs + " ms)");
        }
        this.monotonicNanos = monotonicNanos;
        this.marginNanos = marginMs * 1_000_000L;
        this.lastConfirmedSendNanos = grantSentNanos;
        this.deadlineNanos = grantSentNanos + grantedTtlMs * 1_000_000L - marginNanos;
    }

    /**
     * Records a renewal confirmed by etcd with {@code grantedTtlMs}, sent at {@code sentNanos}. A late
     * answer to an older request never moves the deadline backwards.
     */
    void confirm(long sentNanos, long grantedTtlMs) {
        long candidate = sentNanos + grantedTtlMs * 1_000_000L - marginNanos;
        if (candidate - deadlineNanos > 0) {
            deadlineNanos = candidate;
            lastConfirmedSendNanos = sentNanos;
        }
    }

    boolean passed() {
        return monotonicNanos.getAsLong() - deadlineNanos >= 0;
    }

    long remainingNanos() {
        return deadlineNanos - monotonicNanos.getAsLong();
    }

    long deadlineNanos() {
        return deadlineNanos;
    }

    long lastConfirmedSendNanos() {
        return lastConfirmedSendNanos;
    }
}
