package orbitkv.inventory.session;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The one wake-up of a session's own thread (the source pump, the requester's connect loop): any other
 * thread that changes what that thread waits for (a journal append, returned credit, a flush or
 * regeneration request, a stream end, a close) calls {@link #raise()}. A raise is sticky until the waiter
 * consumes it, so a raise between the waiter's last look at its state and its wait is never lost. No
 * interrupts, no parking outside this class.
 */
final class WakeSignal {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition raised = lock.newCondition();
    /** Guarded by {@code lock}: a raise not yet consumed by {@link #await}. */
    private boolean pending;

    /** Wakes the waiter, or makes its next {@link #await} return at once. */
    void raise() {
        lock.lock();
        try {
            pending = true;
            raised.signal();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until raised or {@code nanos} elapse, and consumes the raise. The caller re-reads its state
     * afterwards: a return says only that something may have changed.
     *
     * @throws InterruptedException only if some code interrupts the session's thread, which this package never does
     */
    void await(long nanos) throws InterruptedException {
        lock.lock();
        try {
            long remaining = nanos;
            while (!pending && remaining > 0) {
                remaining = raised.awaitNanos(remaining);
            }
            pending = false;
        } finally {
            lock.unlock();
        }
    }
}
