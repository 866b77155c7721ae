package orbitkv.conformance.kit;

import java.time.Duration;
import java.util.Objects;

/**
 * One row's hard deadline, counted from the row's start on the monotonic clock (issue 26): whatever frames
 * arrive, a row ends by {@code start + budget}. Every wait of a row is cut to what is left ({@link #bound});
 * a row that has not seen its required outcome by then fails with what it saw.
 *
 * @param startNanos {@link System#nanoTime()} at the row's start
 * @param budget the row's whole time, positive
 */
record RowDeadline(long startNanos, Duration budget) {
    RowDeadline {
        Objects.requireNonNull(budget, "budget");
        if (budget.isNegative() || budget.isZero()) {
            throw new IllegalArgumentException("a row deadline must be positive, got " + budget);
        }
    }

    /** A deadline of {@code budget} from now. */
    static RowDeadline startingNow(Duration budget) {
        return new RowDeadline(System.nanoTime(), budget);
    }

    /** What is left, never negative. */
    Duration remaining() {
        long left = startNanos + budget.toNanos() - System.nanoTime();
        return left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }

    boolean expired() {
        return remaining().isZero();
    }

    /** {@code wait} cut to what is left of the row. */
    Duration bound(Duration wait) {
        Duration left = remaining();
        return wait.compareTo(left) < 0 ? wait : left;
    }

    /** Milliseconds since the row started. */
    long elapsedMillis() {
        return Duration.ofNanos(System.nanoTime() - startNanos).toMillis();
    }
}
