package orbitkv.inventory.source;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Broadcast wake-up on the published head sequence (DELTA-14): a reader arms its own wake-up with the
 * sequence it has seen, and {@link #publish} runs every armed wake-up whose sequence is now passed, never a
 * single one. Armed readers are bounded by {@code waitersMax} (INV-9); a reader that re-arms keeps its one
 * slot. A wake-up runs on the publishing thread, outside this signal's lock, so it must only signal (the
 * session's pump signal does).
 *
 * <p>A publish with nothing armed takes no lock: a reader publishes its arming ({@code armedCount}, volatile)
 * before re-reading the sequence, the publisher publishes the sequence before reading {@code armedCount}, so
 * one of them always sees the other (both are volatile accesses, hence sequentially consistent).
 */
final class SequenceSignal {
    private final AtomicLong published = new AtomicLong();
    /** {@code armed.size()}, readable without the lock by the publisher's fast path. */
    private final AtomicInteger armedCount = new AtomicInteger();
    private final ReentrantLock lock = new ReentrantLock();
    /** Guarded by {@code lock}: each armed wake-up and the sequence its reader had seen. */
    private final Map<Runnable, Long> armed = new IdentityHashMap<>();
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
        return armedCount.get();
    }

    void publish(long sequence) {
        published.accumulateAndGet(sequence, Math::max);
        if (armedCount.get() == 0) {
            return;
        }
        List<Runnable> due = new ArrayList<>();
        lock.lock();
        try {
            long head = published.get();
            for (Iterator<Map.Entry<Runnable, Long>> it = armed.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<Runnable, Long> e = it.next();
                if (head > e.getValue()) {
                    due.add(e.getKey());
                    it.remove();
                }
            }
            armedCount.set(armed.size());
        } finally {
            lock.unlock();
        }
        due.forEach(Runnable::run);
    }

    /**
     * Arms {@code wake} to run once at the first publish above {@code seen}, unless the head is already above
     * it. Re-arming the same wake-up replaces its seen sequence and keeps its slot.
     */
    AwaitOutcome arm(long seen, Runnable wake) {
        long head = published.get();
        if (head > seen) {
            return new AwaitOutcome.Advanced(head);
        }
        lock.lock();
        try {
            if (!armed.containsKey(wake) && armed.size() >= waitersMax) {
                return new AwaitOutcome.WaitersExhausted(waitersMax);
            }
            armed.put(wake, seen);
            armedCount.set(armed.size());
            head = published.get(); // after publishing the arming: see the class comment
            if (head > seen) {
                armed.remove(wake);
                armedCount.set(armed.size());
                return new AwaitOutcome.Advanced(head);
            }
            return new AwaitOutcome.Armed(head);
        } finally {
            lock.unlock();
        }
    }

    /** Removes {@code wake} if armed (its reader stopped waiting for good); frees its slot. */
    void disarm(Runnable wake) {
        lock.lock();
        try {
            armed.remove(wake);
            armedCount.set(armed.size());
        } finally {
            lock.unlock();
        }
    }
}
