package orbitkv.server.incarnation;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The waiters of {@code POST /cache/metadata/await} (API-4, INV-9): at most {@code waitersMax} at once
 * (beyond: {@code TOO_MANY_WAITERS}, a named refusal), each bounded by its own timeout.
 *
 * <p>Wake-ups are driven by events, not by polling: {@link #signal()} is called after every frame the
 * GlobalIndex applies or commits (through {@link InstallSignallingReceiver}) and after every membership event;
 * each signal wakes every waiter, which re-runs its {@link Probe} outside the lock. A signal that arrives
 * between a probe and the wait is never lost (the waiter compares the signal count it saw before probing).
 */
final class AwaitRegistry {
    /** One evaluation of a waiter's condition; may throw {@link MetadataRefusal} to refuse at once. */
    @FunctionalInterface
    interface Probe<T> {
        Result<T> check();
    }

    /** The outcome of one probe. */
    sealed interface Result<T> {
        /** The condition holds: answer {@code value}. */
        record Ready<T>(T value) implements Result<T> {}

        /** Not yet; if the timeout passes now, refuse with {@code onTimeout} and {@code message}. */
        record Pending<T>(MetadataRefusal.Reason onTimeout, String message) implements Result<T> {}
    }

    private final int waitersMax;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private long signals;
    private int waiting;
    private final AtomicLong refusedTooMany = new AtomicLong();
    private final AtomicLong timedOut = new AtomicLong();

    AwaitRegistry(int waitersMax) {
        if (waitersMax < 1) {
            throw new IllegalArgumentException("waitersMax must be >= 1, got " + waitersMax);
        }
        this.waitersMax = waitersMax;
    }

    /**
     * Waits until {@code probe} is ready, at most {@code timeoutMs}.
     *
     * @throws MetadataRefusal TOO_MANY_WAITERS beyond the bound, the probe's refusal, or its timeout error
     */
    <T> T await(long timeoutMs, Probe<T> probe) throws InterruptedException {
        enter();
        try {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            while (true) {
                long seen = signalCount();
                Result<T> r = probe.check();
                if (r instanceof Result.Ready<T> ready) {
                    return ready.value();
                }
                Result.Pending<T> pending = (Result.Pending<T>) r;
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    timedOut.incrementAndGet();
                    throw new MetadataRefusal(pending.onTimeout(), pending.message());
                }
                waitForSignalAfter(seen, remaining);
            }
        } finally {
            leave();
        }
    }

    /** Wakes every waiter to re-check its condition. */
    void signal() {
        lock.lock();
        try {
            signals++;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    int waiting() {
        lock.lock();
        try {
            return waiting;
        } finally {
            lock.unlock();
        }
    }

    int waitersMax() {
        return waitersMax;
    }

    long refusedTooMany() {
        return refusedTooMany.get();
    }

    long timedOut() {
        return timedOut.get();
    }

    private void enter() {
        lock.lock();
        try {
            if (waiting >= waitersMax) {
                refusedTooMany.incrementAndGet();
                throw new MetadataRefusal(MetadataRefusal.Reason.TOO_MANY_WAITERS, "at most " + waitersMax
                        + " /cache/metadata/await requests wait at once (--await-waiters-max); retry later");
            }
            waiting++;
        } finally {
            lock.unlock();
        }
    }

    private void leave() {
        lock.lock();
        try {
            waiting--;
        } finally {
            lock.unlock();
        }
    }

    private long signalCount() {
        lock.lock();
        try {
            return signals;
        } finally {
            lock.unlock();
        }
    }

    private void waitForSignalAfter(long seen, long remainingNanos) throws InterruptedException {
        lock.lock();
        try {
            long left = remainingNanos;
            while (signals == seen && left > 0) {
                left = changed.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }
}
