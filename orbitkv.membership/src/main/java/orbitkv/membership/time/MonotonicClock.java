package orbitkv.membership.time;

import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import orbitkv.membership.ProtocolClock;

/**
 * The production {@link ProtocolClock}: time is {@code System.nanoTime()} (CLOCK_MONOTONIC on Linux, which a
 * wall-clock jump does not move), tasks run on a scheduler the caller owns. The only class of the protocol
 * core that reads the clock ({@code WallClockIndependenceTest.protocolCoreReadsOnlyTheInjectedClock}).
 */
public final class MonotonicClock implements ProtocolClock {
    /** Reads time; refuses timers (for components that arm none, such as the inventory's publication stamps). */
    public static final ProtocolClock TIME_ONLY = new MonotonicClock(null);

    private final ScheduledExecutorService timer;

    public MonotonicClock(ScheduledExecutorService timer) {
        this.timer = timer;
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public Scheduled schedule(Runnable task, long delayNanos) {
        Objects.requireNonNull(task, "task");
        if (timer == null) {
            throw new IllegalStateException("this monotonic clock reads time only; it has no timer to schedule on");
        }
        ScheduledFuture<?> f = timer.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        return () -> f.cancel(false);
    }

    /** Real time is this clock's time: the wait's own real bound ends it, and no timer task is armed. */
    @Override
    public TimedWait timedWait(Runnable wake, long delayNanos) {
        return new TimedWait(Math.max(1, delayNanos), Scheduled.NONE);
    }

    @Override
    public String toString() {
        return timer == null ? "monotonic (time only)" : "monotonic on " + timer;
    }
}
