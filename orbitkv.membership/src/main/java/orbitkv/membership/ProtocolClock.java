package orbitkv.membership;

import java.util.concurrent.ScheduledExecutorService;
import orbitkv.membership.time.MonotonicClock;

/**
 * The one source of time and timers of the protocol core (issue 25 item 1): the source and requester
 * sessions (ACK cadence, liveness, the receive deadline, coalescing windows, backoff pauses), the coalescer's
 * window timer and the index's freshness checks read time and arm timers only through this contract, so a
 * test or a simulator can drive them with virtual time while production runs on the monotonic clock.
 *
 * <p>Time is a monotonic nanosecond count with an arbitrary origin, compared only by subtraction (like
 * {@code System.nanoTime()}); it never reads the wall clock. A scheduled task runs once, at or after
 * {@code delayNanos} of this clock's time, on the clock's timer thread (production) or on the thread that
 * advances virtual time (tests): it must be short and must not block. It lives in membership's contract
 * package because every protocol module requires membership.
 */
public interface ProtocolClock {
    /** Now, in monotonic nanoseconds of this clock. */
    long nanoTime();

    /**
     * Runs {@code task} once after {@code delayNanos} of this clock's time (at once, on the timer, if not positive).
     *
     * @return a handle that cancels the task if it has not started
     * @throws java.util.concurrent.RejectedExecutionException if the clock's timer has been shut down
     */
    Scheduled schedule(Runnable task, long delayNanos);

    /**
     * Prepares a thread's timed wait for {@code delayNanos} of this clock's time (a session waiting for a window,
     * liveness, a receive deadline or a backoff): arranges for {@code wake} to run once this clock passes the
     * delay, and says how long the thread may block in real time before it must look at its state again. The
     * waiter cancels {@link TimedWait#wake()} when it returns.
     *
     * <p>This default is for clocks whose time is not the host's (a test's or a simulator's virtual time): the
     * scheduled {@code wake} ends the wait, and the real bound ({@link #VIRTUAL_RECHECK_NANOS}) only makes the
     * waiter re-read its state now and then. The production clock overrides it: its time is real, so the real
     * bound is the delay itself and no task is armed (no timer-thread traffic per wait).
     */
    default TimedWait timedWait(Runnable wake, long delayNanos) {
        return new TimedWait(VIRTUAL_RECHECK_NANOS, schedule(wake, delayNanos));
    }

    /** How often, in real time, a waiter on a virtual clock re-reads its state while virtual time stands still. */
    long VIRTUAL_RECHECK_NANOS = 100_000_000L;

    /**
     * A prepared timed wait.
     *
     * @param realBoundNanos the longest real wait before the waiter looks again, at least 1
     * @param wake the armed wake-up (a no-op handle when none was needed)
     */
    record TimedWait(long realBoundNanos, Scheduled wake) {
        public TimedWait {
            if (realBoundNanos < 1) {
                throw new IllegalArgumentException("a timed wait's real bound must be >= 1 ns, got " + realBoundNanos);
            }
            java.util.Objects.requireNonNull(wake, "wake");
        }
    }

    /** A task armed by {@link #schedule}. */
    @FunctionalInterface
    interface Scheduled {
        /** Nothing armed: cancelling does nothing. */
        Scheduled NONE = () -> {};

        /** Cancels the task if it has not started; idempotent, a no-op once it ran. */
        void cancel();
    }

    /**
     * The production clock: {@code System.nanoTime()} for time and {@code timer} (an existing
     * scheduler the caller owns and shuts down) for tasks.
     */
    static ProtocolClock monotonic(ScheduledExecutorService timer) {
        return new MonotonicClock(timer);
    }

    /** The monotonic clock's time alone, for components that only read time and arm no timer. */
    static ProtocolClock monotonicTimeOnly() {
        return MonotonicClock.TIME_ONLY;
    }
}
