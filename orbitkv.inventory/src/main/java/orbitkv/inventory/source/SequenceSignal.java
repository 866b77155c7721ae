package orbitkv.inventory.source;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import orbitkv.inventory.AwaitOutcome;

/**
 * Broadcast wake-up on the published head sequence (DELTA-14): {@link #publish} wakes every waiter
 * ({@code signalAll}), never a single one. Waiters are bounded by {@code waitersMax} (INV-9). A publish with
 * no waiter takes no lock: the waiter registers before re-checking the sequence, the publisher updates the
 * sequence before reading the waiter count, so one of them always sees the other.
 */
final class SequenceSignal {
    private final AtomicLong published = new AtomicLong();
    private final AtomicInteger waiters = new AtomicInteger();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition advanced = lock.newCondition();
    private final int waitersMax;

    SequenceSignal(int waitersMax) {
        if (waitersMax < 1) {
            throw new IllegalArgumentException("waitersMax must be >= 1, got " + waitersMax);
        }
        this.waitersMax = waitersMax;
    }

    long published() {
        return published.get();
    }

    int waiting() {
        return waiters.get();
    }

    void publish(long sequence) {
        published.accumulateAndGet(sequence, Math::max);
        if (waiters.get() > 0) {
            lock.lock();
            try {
                advanced.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    AwaitOutcome awaitAbove(long seen, long timeoutNanos) throws InterruptedException {
        long head = published.get();
        if (head > seen) {
            return new AwaitOutcome.Advanced(head);
        }
        if (timeoutNanos <= 0) {
            return new AwaitOutcome.TimedOut(head);
        }
        if (waiters.incrementAndGet() > waitersMax) {
            waiters.decrementAndGet();
            return new AwaitOutcome.WaitersExhausted(waitersMax);
        }
        try {
            lock.lockInterruptibly();
            try {
                long remaining = timeoutNanos;
                while ((head = published.get()) <= seen) {
                    if (remaining <= 0) {
                        return new AwaitOutcome.TimedOut(head);
                    }
                    remaining = advanced.awaitNanos(remaining);
                }
                return new AwaitOutcome.Advanced(head);
            } finally {
                lock.unlock();
            }
        } finally {
            waiters.decrementAndGet();
        }
    }
}
