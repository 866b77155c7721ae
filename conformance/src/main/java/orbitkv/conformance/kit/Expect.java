package orbitkv.conformance.kit;

import java.time.Duration;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/** The kit's checks: a failed one is an {@link AssertionError} whose message becomes the FAIL line. */
final class Expect {
    private Expect() {}

    static void that(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }

    static void equal(Object actual, Object expected, String what) {
        if (!Objects.equals(actual, expected)) {
            throw new AssertionError(what + ": expected " + expected + ", got " + actual);
        }
    }

    /** Polls {@code condition} every 5 ms until it holds; fails naming {@code what} after {@code bound}. */
    static void within(Duration bound, String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + bound.toMillis() + " ms: " + what);
            }
            Thread.sleep(5);
        }
    }
}
