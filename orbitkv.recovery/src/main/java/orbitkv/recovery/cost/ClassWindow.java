package orbitkv.recovery.cost;

import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.ObservationOutcome;
import orbitkv.recovery.RouteClass;

/**
 * The bounded observation window of one class: a ring of the newest {@code capacity} observations (the oldest is
 * evicted first, counted) and the estimate fitted from it, republished after every record. Records are serialized
 * by the window's lock; readers take the published estimate without locking.
 *
 * <p>The least-squares sums over the successes are kept incrementally (the evicted observation is subtracted) and
 * recomputed exactly once per turn of the ring, so floating-point drift stays bounded; the error quantile is a
 * selection over the current residuals in a reused buffer. A record costs O(window) without sorting or allocation
 * beyond the published estimate.
 */
final class ClassWindow {
    private final RouteClass routeClass;
    private final int capacity;
    private final double errorQuantile;
    private final long[] bytes;
    private final long[] nanos;
    private final ObservationOutcome[] outcomes;
    private final double[] residuals;
    private int size;
    private int next;
    private long evicted;
    private long lastAtNanos;
    private int successes;
    private int failures;
    private int timeouts;
    private int refusals;
    private double sx;
    private double sy;
    private double sxx;
    private double sxy;
    private int sinceExact;
    private volatile CostEstimate estimate;

    ClassWindow(RouteClass routeClass, int capacity, double errorQuantile) {
        this.routeClass = routeClass;
        this.capacity = capacity;
        this.errorQuantile = errorQuantile;
        this.bytes = new long[capacity];
        this.nanos = new long[capacity];
        this.outcomes = new ObservationOutcome[capacity];
        this.residuals = new double[capacity];
    }

    /** Adds one observation; returns true iff an older one was evicted to make room. */
    synchronized boolean record(Observation o) {
        boolean evict = size == capacity;
        if (evict) {
            account(next, -1);
            evicted++;
        } else {
            size++;
        }
        bytes[next] = o.bytes();
        nanos[next] = o.elapsedNanos();
        outcomes[next] = o.outcome();
        account(next, +1);
        next = (next + 1) % capacity;
        lastAtNanos = o.atNanos();
        if (++sinceExact >= capacity) {
            exactSums();
        }
        estimate = fit();
        return evict;
    }

    CostEstimate estimate() {
        return estimate;
    }

    private void account(int i, int sign) {
        switch (outcomes[i]) {
            case SUCCEEDED -> {
                successes += sign;
                double x = bytes[i];
                double y = nanos[i];
                sx += sign * x;
                sy += sign * y;
                sxx += sign * x * x;
                sxy += sign * x * y;
            }
            case FAILED -> failures += sign;
            case TIMED_OUT -> timeouts += sign;
            case REFUSED -> refusals += sign;
        }
    }

    private void exactSums() {
        sinceExact = 0;
        sx = 0;
        sy = 0;
        sxx = 0;
        sxy = 0;
        for (int i = 0; i < size; i++) {
            if (outcomes[i] == ObservationOutcome.SUCCEEDED) {
                double x = bytes[i];
                double y = nanos[i];
                sx += x;
                sy += y;
                sxx += x * x;
                sxy += x * y;
            }
        }
    }

    /**
     * Least squares of nanos on bytes over the successes, clamped so both terms are >= 0 (a negative slope becomes
     * a flat mean; a negative intercept becomes a line through the origin), then the error quantile of the absolute
     * residuals (nearest rank).
     */
    private CostEstimate fit() {
        double fixed = 0;
        double perByte = 0;
        double error = 0;
        if (successes > 0) {
            double n = successes;
            double mx = sx / n;
            double my = sy / n;
            double cxx = sxx - n * mx * mx; // centred sums
            double cxy = sxy - n * mx * my;
            if (cxx > 1e-9 * Math.max(1, sxx)) {
                perByte = cxy / cxx;
                fixed = my - perByte * mx;
            } else {
                fixed = my;
            }
            if (perByte < 0) {
                perByte = 0;
                fixed = my;
            } else if (fixed < 0) {
                fixed = 0;
                perByte = sxy / sxx;
            }
            int k = 0;
            for (int i = 0; i < size; i++) {
                if (outcomes[i] == ObservationOutcome.SUCCEEDED) {
                    residuals[k++] = Math.abs(nanos[i] - (fixed + perByte * bytes[i]));
                }
            }
            int rank = (int) Math.ceil(errorQuantile * k) - 1;
            error = select(residuals, k, Math.max(0, Math.min(k - 1, rank)));
        }
        return new CostEstimate(routeClass, successes, failures, timeouts, refusals, Math.max(0, fixed), Math.max(0, perByte),
                error, lastAtNanos, evicted);
    }

    /** The {@code rank}-th smallest of {@code a[0, n)} (quickselect; reorders the buffer). */
    static double select(double[] a, int n, int rank) {
        int lo = 0;
        int hi = n - 1;
        while (lo < hi) {
            double pivot = a[(lo + hi) >>> 1];
            int i = lo;
            int j = hi;
            while (i <= j) {
                while (a[i] < pivot) {
                    i++;
                }
                while (a[j] > pivot) {
                    j--;
                }
                if (i <= j) {
                    double t = a[i];
                    a[i] = a[j];
                    a[j] = t;
                    i++;
                    j--;
                }
            }
            if (rank <= j) {
                hi = j;
            } else if (rank >= i) {
                lo = i;
            } else {
                return a[rank];
            }
        }
        return a[lo];
    }
}
