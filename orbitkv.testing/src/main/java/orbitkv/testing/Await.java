package orbitkv.testing;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Awaits a condition with a bound, polling; never a fixed sleep used as synchronization. The bound only decides how
 * long a failing run takes (docs/testing.md: 20-60 s). The one await helper of every module's tests (issue 34 item 6).
 */
public final class Await {
    private Await() {}

    /** The poll of {@link #until(String, Duration, BooleanSupplier)}: conditions that cost a request (HTTP, etcd). */
    public static final Duration POLL = Duration.ofMillis(20);
    /** The poll of {@link #inJvm}: cheap conditions on this JVM's own objects, some true only briefly. */
    public static final Duration POLL_IN_JVM = Duration.ofMillis(1);

    /**
     * Returns how long it took; throws {@link AssertionError} naming {@code what} after {@code bound}. Polls every
     * {@link #POLL}.
     */
    public static Duration until(String what, Duration bound, BooleanSupplier condition) {
        return until(what, bound, POLL, condition);
    }

    /** {@link #until(String, Duration, BooleanSupplier)} polling every {@link #POLL_IN_JVM}. */
    public static Duration inJvm(String what, Duration bound, BooleanSupplier condition) {
        return until(what, bound, POLL_IN_JVM, condition);
    }

    /**
     * {@link #until(String, Duration, BooleanSupplier)} polling every {@code poll} (timing harnesses poll at
     * 1 ms so the poll does not dominate what they measure).
     */
    public static Duration until(String what, Duration bound, Duration poll, BooleanSupplier condition) {
        long start = System.nanoTime();
        long end = start + bound.toNanos();
        while (true) {
            if (condition.getAsBoolean()) {
                return Duration.ofNanos(System.nanoTime() - start);
            }
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("not within " + bound.toMillis() + " ms: " + what);
            }
            if (Thread.currentThread().isInterrupted()) {
                throw new AssertionError("interrupted while awaiting: " + what);
            }
            LockSupport.parkNanos(poll.toNanos());
        }
    }
}
