package orbitkv.recovery.cost;

import java.util.Arrays;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.Observation;
import orbitkv.recovery.ObservationOutcome;
import orbitkv.recovery.RouteClass;

/**
 * The bounded observation window of one class: a ring of the newest {@code capacity} observations (the oldest is
 * evicted first, counted) and the estimate fitted from it, republished after every record. Records are serialized
 * by the window's lock; readers take the published estimate without locking.
 */
final class ClassWindow {
    private final RouteClass routeClass;
    private final int capacity;
    private final double errorQuantile;
    private final long[] bytes;
    private final long[] nanos;
    private final ObservationOutcome[] outcomes;
    private int size;
    private int next;
    private long evicted;
    private long lastAtNanos;
    private volatile CostEstimate estimate;

    ClassWindow(RouteClass routeClass, int capacity, double errorQuantile) {
        this.routeClass = routeClass;
        this.capacity = capacity;
        this.errorQuantile = errorQuantile;
        this.bytes = new long[capacity];
        this.nanos = new long[capacity];
        this.outcomes = new ObservationOutcome[capacity];
    }

    /** Adds one observation; returns true iff an older one was evicted to make room. */
    synchronized boolean record(Observation o) {
        boolean evict = size == capacity;
        bytes[next] = o.bytes();
        nanos[next] = o.elapsedNanos();
        outcomes[next] = o.outcome();
        next = (next + 1) % capacity;
        if (evict) {
            evicted++;
        } else {
            size++;
        }
        lastAtNanos = o.atNanos();
        estimate = fit();
        return evict;
    }

    CostEstimate estimate() {
        return estimate;
    }

    /**
     * Least squares of nanos on bytes over the successes, clamped so both terms are >= 0 (a negative slope becomes
     * a flat mean; a negative intercept becomes a line through the origin), then the error quantile of the absolute
     * residuals (nearest rank).
     */
    private CostEstimate fit() {
        int successes = 0;
        int failures = 0;
        int timeouts = 0;
        int refusals = 0;
        double sx = 0;
        double sy = 0;
        for (int i = 0; i < size; i++) {
            switch (outcomes[i]) {
                case SUCCEEDED -> {
                    successes++;
                    sx += bytes[i];
                    sy += nanos[i];
                }
                case FAILED -> failures++;
                case TIMED_OUT -> timeouts++;
                case REFUSED -> refusals++;
            }
        }
        double fixed = 0;
        double perByte = 0;
        double error = 0;
        if (successes > 0) {
            double mx = sx / successes;
            double my = sy / successes;
            double sxx = 0;
            double sxy = 0;
            double rxx = 0;
            double rxy = 0;
            for (int i = 0; i < size; i++) {
                if (outcomes[i] == ObservationOutcome.SUCCEEDED) {
                    double dx = bytes[i] - mx;
                    sxx += dx * dx;
                    sxy += dx * (nanos[i] - my);
                    rxx += (double) bytes[i] * bytes[i];
                    rxy += (double) bytes[i] * nanos[i];
                }
            }
            if (sxx > 0) {
                perByte = sxy / sxx;
                fixed = my - perByte * mx;
            } else {
                fixed = my;
            }
            if (perByte < 0) {
                perByte = 0;
                fixed = my;
            } else if (fixed < 0) {
                fixed = 0;
                perByte = rxy / rxx;
            }
            double[] residuals = new double[successes];
            int k = 0;
            for (int i = 0; i < size; i++) {
                if (outcomes[i] == ObservationOutcome.SUCCEEDED) {
                    residuals[k++] = Math.abs(nanos[i] - (fixed + perByte * bytes[i]));
                }
            }
            Arrays.sort(residuals);
            int rank = (int) Math.ceil(errorQuantile * successes) - 1;
            error = residuals[Math.max(0, Math.min(successes - 1, rank))];
        }
        return new CostEstimate(routeClass, successes, failures, timeouts, refusals, fixed, perByte, error, lastAtNanos, evicted);
    }
}
