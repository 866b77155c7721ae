package orbitkv.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.PriorityQueue;

/**
 * Virtual monotonic time for tests (issue 25): time moves only when a test calls {@link #advance}, and a task
 * scheduled for virtual time runs exactly when an advance passes its due time, on the advancing thread, in due
 * order (ties in scheduling order), with {@link #nanoTime()} reading the task's due time while it runs. Other
 * threads (a session's pump or connect loop, gRPC callbacks) may read the time and schedule concurrently.
 *
 * <p>It mirrors {@code orbitkv.membership.ProtocolClock} without implementing it: this artifact depends on
 * nothing but {@code java.base} (membership's own tests use it), so a test adapts it in one line
 * ({@code new ProtocolClock() { nanoTime() -> clock.nanoTime(); schedule(t, d) -> clock.schedule(t, d)::cancel }}).
 * At most {@link #TASKS_MAX} tasks may be pending; one more is refused with {@link IllegalStateException}.
 */
public final class ManualClock {
    /** The bound on pending tasks: a test that arms more has a leak, not a schedule. */
    public static final int TASKS_MAX = 100_000;

    private final PriorityQueue<Task> pending = new PriorityQueue<>();
    private long now;
    private long scheduled;
    private long ran;

    /** A clock at {@code startNanos} (any value: monotonic time has an arbitrary origin; tests use a large one to catch wrap bugs). */
    public ManualClock(long startNanos) {
        this.now = startNanos;
    }

    /** A handle to one scheduled task. */
    public interface Handle {
        /** Cancels the task if it has not run; idempotent. */
        void cancel();
    }

    /** Now, in virtual nanoseconds. */
    public synchronized long nanoTime() {
        return now;
    }

    /**
     * Runs {@code task} once when virtual time reaches {@code now + max(0, delayNanos)}; a task due now runs at
     * the next {@link #advance} (also {@code advance(0)}).
     */
    public synchronized Handle schedule(Runnable task, long delayNanos) {
        Objects.requireNonNull(task, "task");
        if (pending.size() >= TASKS_MAX) {
            throw new IllegalStateException("ManualClock: " + TASKS_MAX + " tasks already pending (TASKS_MAX)");
        }
        Task t = new Task(now + Math.max(0, delayNanos), scheduled++, task);
        pending.add(t);
        return () -> cancel(t);
    }

    private synchronized void cancel(Task t) {
        pending.remove(t);
    }

    /**
     * Moves virtual time forward by {@code nanos}, running every task that falls due on the way (including those
     * the tasks schedule within the interval), each at its own due time.
     *
     * @return how many tasks ran
     * @throws IllegalArgumentException if {@code nanos < 0}: virtual time never goes back
     */
    public int advance(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("virtual time moves forward only, got " + nanos + " ns");
        }
        long target;
        synchronized (this) {
            target = now + nanos;
        }
        int count = 0;
        while (true) {
            Task next;
            synchronized (this) {
                next = pending.peek();
                if (next == null || next.dueNanos - target > 0) {
                    now = target;
                    return count;
                }
                pending.poll();
                now = next.dueNanos;
                ran++;
            }
            next.task.run(); // outside the monitor: a task may read the time or schedule
            count++;
        }
    }

    /** Virtual time until the earliest pending task, empty if none. */
    public synchronized OptionalLong nanosToNextTask() {
        Task t = pending.peek();
        return t == null ? OptionalLong.empty() : OptionalLong.of(t.dueNanos - now);
    }

    /** Pending tasks' delays from now, earliest first (for assertions and diagnostics). */
    public synchronized List<Long> pendingDelaysNanos() {
        List<Task> all = new ArrayList<>(pending);
        all.sort(null);
        return all.stream().map(t -> t.dueNanos - now).toList();
    }

    /** Tasks run so far. */
    public synchronized long tasksRun() {
        return ran;
    }

    @Override
    public synchronized String toString() {
        return "ManualClock{now=" + now + ", pending=" + pending.size() + ", ran=" + ran + "}";
    }

    private record Task(long dueNanos, long order, Runnable task) implements Comparable<Task> {
        @Override
        public int compareTo(Task o) {
            int c = Long.compare(dueNanos - o.dueNanos, 0); // by difference: wrap-safe like nanoTime
            return c != 0 ? c : Long.compare(order, o.order);
        }
    }
}
