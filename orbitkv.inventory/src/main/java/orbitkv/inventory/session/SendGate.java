package orbitkv.inventory.session;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The thread-safe shell of one source's {@link SendScheduler} (ROUTE-10, issue 39 item 5): each session's pump thread
 * {@link #acquire}s before a pump step and {@link #release}s after it, so at most {@code sendStepsConcurrentMax} steps
 * of this source run at once and a waiting session of a higher class goes first. All decisions are the scheduler's;
 * this class only blocks and wakes the pump threads (one lock, one condition).
 *
 * @param <K> a session ({@code SourceSession} in the server; any key in {@code SendGateTest})
 */
final class SendGate<K> {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final SendScheduler<K> scheduler;
    /** Guarded by {@link #lock}: sessions granted a step whose thread has not yet taken it. */
    private final Set<K> granted = new HashSet<>();

    SendGate(int permits, int queuedMax, boolean priority) {
        this.scheduler = new SendScheduler<>(permits, queuedMax, priority);
    }

    /**
     * Waits until {@code s} may run a step at {@code p}. False (nothing held) when the queue is full: the scheduler
     * refused by name and counted it; the caller looks again after its next wait.
     */
    boolean acquire(K s, SendPriority p) throws InterruptedException {
        lock.lock();
        try {
            switch (scheduler.request(s, p)) {
                case SendScheduler.Admission.Granted g -> {
                    return true;
                }
                case SendScheduler.Admission.Refused r -> {
                    return false;
                }
                case SendScheduler.Admission.Queued q -> { }
            }
            try {
                while (!granted.remove(s)) {
                    changed.await(1, TimeUnit.SECONDS); // signalled on every grant; the bound only re-checks
                }
            } catch (InterruptedException e) {
                if (!granted.remove(s) && !scheduler.running(s)) {
                    scheduler.cancel(s);
                } else {
                    grantAll(scheduler.release(s));
                }
                throw e;
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** True when a waiting session outranks the running step of {@code s} (checked between the step's actions). */
    boolean shouldYield(K s) {
        lock.lock();
        try {
            return scheduler.shouldYield(s);
        } finally {
            lock.unlock();
        }
    }

    /** A waiting {@code s} now asks at {@code p} (a barrier arrived while it waited); nothing if it does not wait. */
    void reclass(K s, SendPriority p) {
        lock.lock();
        try {
            if (scheduler.isQueued(s)) {
                scheduler.request(s, p);
            }
        } finally {
            lock.unlock();
        }
    }

    /** The step of {@code s} ended: the next sessions by class run. */
    void release(K s) {
        lock.lock();
        try {
            grantAll(scheduler.release(s));
        } finally {
            lock.unlock();
        }
    }

    private void grantAll(List<K> next) {
        if (!next.isEmpty()) {
            granted.addAll(next);
            changed.signalAll();
        }
    }

    /** Requests refused because the send queue was full (named refusal, counted). */
    long refusals() {
        lock.lock();
        try {
            return scheduler.refusals();
        } finally {
            lock.unlock();
        }
    }

    /** Sessions waiting for a step. */
    int queued() {
        lock.lock();
        try {
            return scheduler.queuedCount();
        } finally {
            lock.unlock();
        }
    }

    /** Steps that ended early for a session of a higher class. */
    long yields() {
        lock.lock();
        try {
            return scheduler.yields();
        } finally {
            lock.unlock();
        }
    }
}
