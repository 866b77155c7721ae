package orbitkv.conformance.etcd;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Awaits a condition with a bound, polling (every 20 ms unless told); never a fixed sleep used as synchronization. */
public final class Await {
    private Await() {}

    /**
     * Returns how long it took; throws {@link AssertionError} naming {@code what} after {@code bound}.
     */
    public static Duration until(String what, Duration bound, BooleanSupplier condition) {
        return until(what, bound, Duration.ofMillis(20), condition);
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
