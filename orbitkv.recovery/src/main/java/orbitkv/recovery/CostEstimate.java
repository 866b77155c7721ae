package orbitkv.recovery;

import java.util.Objects;

/**
 * The cost model's current estimate for one class (ROUTE-3, ROUTE-6), fitted from its bounded window of
 * executed routes: {@code time = fixedNanos + bytes * nanosPerByte} by least squares over the successes (both
 * terms clamped at zero), an empirical error bound, and a risk rate from every non-success.
 *
 * @param routeClass the class
 * @param successes successful observations in the window (the "comparable successes")
 * @param failures payload failures in the window
 * @param timeouts timeouts in the window
 * @param refusals path refusals in the window
 * @param fixedNanos fitted fixed cost per route
 * @param nanosPerByte fitted time per byte (1e9 / bytes per second)
 * @param errorNanos the policy's quantile of |actual - fitted| over the successes
 * @param lastObservationNanos when the newest observation arrived (selection clock)
 * @param evicted observations evicted from this class's window so far
 */
public record CostEstimate(RouteClass routeClass, int successes, int failures, int timeouts, int refusals, double fixedNanos,
        double nanosPerByte, double errorNanos, long lastObservationNanos, long evicted) {
    public CostEstimate {
        Objects.requireNonNull(routeClass, "routeClass");
        if (successes < 0 || failures < 0 || timeouts < 0 || refusals < 0 || evicted < 0) {
            throw new IllegalArgumentException("counts must be >= 0");
        }
        if (!(fixedNanos >= 0) || !(nanosPerByte >= 0) || !(errorNanos >= 0)) {
            throw new IllegalArgumentException("fit must be finite and >= 0: " + fixedNanos + ", " + nanosPerByte + ", " + errorNanos);
        }
    }

    public int observations() {
        return successes + failures + timeouts + refusals;
    }

    /** Failures, timeouts and refusals over all observations in the window. */
    public double riskRate() {
        int n = observations();
        return n == 0 ? 0 : (double) (failures + timeouts + refusals) / n;
    }

    /** Predicted nanoseconds for a route of {@code bytes}. */
    public double predictNanos(long bytes) {
        return fixedNanos + nanosPerByte * bytes;
    }

    /** Bytes per second implied by the fit (infinite when the fit has no per-byte term). */
    public double bytesPerSecond() {
        return nanosPerByte == 0 ? Double.POSITIVE_INFINITY : 1e9 / nanosPerByte;
    }

    /** At least {@code observationsMin} comparable successes. */
    public boolean sampled(int observationsMin) {
        return successes >= observationsMin;
    }
}
