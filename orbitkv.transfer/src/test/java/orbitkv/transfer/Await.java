package orbitkv.transfer;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Awaits a condition with a hard bound (never a bare sleep as synchronization). */
public final class Await {
    private Await() {}

    public static void until(String what, Duration bound, BooleanSupplier condition) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + bound + ": " + what);
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted awaiting " + what);
            }
        }
    }
}
