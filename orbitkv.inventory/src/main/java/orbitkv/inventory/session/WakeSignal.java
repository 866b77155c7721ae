package orbitkv.inventory.session;

import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import orbitkv.membership.ProtocolClock;

/**
 * The one wake-up of a session's own thread (the source pump, the requester's connect loop): any other
 * thread that changes what that thread waits for (a journal append, returned credit, a flush or
 * regeneration request, a stream end, a close) calls {@link #raise()}. A raise is sticky until the waiter
 * consumes it, so a raise between the waiter's last look at its state and its wait is never lost. No
 * interrupts, no parking outside this class.
 *
 * <p>A timed wait lasts {@code nanos} of the session's {@link ProtocolClock} (issue 25): on the production
 * clock that is a real timed wait, as before; on a virtual clock the clock's wake-up raises the signal when
 * virtual time passes the timeout, and the real wait only bounds how long the waiter goes without looking.
 */
final class WakeSignal {
    private final ProtocolClock clock;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition raised = lock.newCondition();
    /** Guarded by {@code lock}: a raise not yet consumed by {@link #await}. */
    private boolean pending;

    WakeSignal(ProtocolClock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

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
     * Waits until raised or {@code nanos} of the session's clock elapse, and consumes the raise. The caller re-reads its state
     * afterwards: a return says only that something may have changed.
     *
     * @throws InterruptedException only if some code interrupts the session's thread, which this package never does
     */
    void await(long nanos) throws InterruptedException {
        ProtocolClock.TimedWait timed = nanos > 0 ? prepare(nanos) : null;
        lock.lock();
        try {
            long remaining = timed == null ? 0 : timed.realBoundNanos();
            while (!pending && remaining > 0) {
                remaining = raised.awaitNanos(remaining);
            }
            pending = false;
        } finally {
            lock.unlock();
            if (timed != null) {
                timed.wake().cancel();
            }
        }
    }

    /** The clock's wait; a plain real wait if the clock's timer is already shut down (the session is ending). */
    private ProtocolClock.TimedWait prepare(long nanos) {
        try {
            return clock.timedWait(this::raise, nanos);
        } catch (RejectedExecutionException shutDown) {
            return new ProtocolClock.TimedWait(nanos, ProtocolClock.Scheduled.NONE);
        }
    }
}
