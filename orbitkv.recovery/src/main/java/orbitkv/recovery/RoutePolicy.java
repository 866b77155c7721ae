package orbitkv.recovery;

import java.util.Objects;

/**
 * Route selection settings (DESIGN §9 "route search"; ROUTE-4, ROUTE-6, ROUTE-7, ROUTE-9). Each setting has a
 * unit in its name and a default constant; the compact constructor is the one place that checks them and names
 * both sides of a broken relation (BND-6). The Manager's four {@code --route-*} options map onto the first four
 * bounds ({@link #fromManagerOptions}).
 *
 * @param selectionMode FIXED, SHADOW or COST_DRIVEN ({@link SelectionMode})
 * @param alternativesPerBoundaryMax non-dominated partial alternatives kept at one boundary
 *     ({@code --route-alternatives-per-boundary-max})
 * @param alternativesPerBatchMax alternatives evaluated per demand batch before the search gives up and the fixed
 *     plan stands ({@code --route-alternatives-per-batch-max})
 * @param observationsMin comparable successful observations a class needs before it can take part in a switch
 *     ({@code --route-observations-min})
 * @param replansMax replans after pre-submission refusals within the original deadline ({@code --route-replans-max};
 *     the design allows at most two)
 * @param observationsPerClassMax observations kept per class; the oldest is evicted first
 * @param peersTrackedMax peer nodes with cost classes; beyond it the least recently observed peer is evicted
 * @param errorQuantile quantile of absolute residuals taken as the empirical error bound
 * @param hysteresisFraction part of the fixed plan's predicted time a switch must gain beyond the uncertainty
 * @param hysteresisMinNanos lower bound of the hysteresis margin
 * @param tracesRetainedMax route traces kept in memory for paginated status
 * @param loadOwnersMax owners with a retained load summary
 * @param loadValidityMs receipt age beyond a summary's own window after which it expires
 */
public record RoutePolicy(SelectionMode selectionMode, int alternativesPerBoundaryMax, int alternativesPerBatchMax,
        int observationsMin, int replansMax, int observationsPerClassMax, int peersTrackedMax, double errorQuantile,
        double hysteresisFraction, long hysteresisMinNanos, int tracesRetainedMax, int loadOwnersMax, long loadValidityMs) {
    /**
     * SHADOW: the design asks to validate cost-driven selection across workloads before it becomes a default, so
     * by default the fixed plan executes and the cost-driven choice is traced.
     */
    public static final SelectionMode SELECTION_MODE_DEFAULT = SelectionMode.SHADOW;
    /** 8 (DESIGN §9). */
    public static final int ALTERNATIVES_PER_BOUNDARY_MAX_DEFAULT = 8;
    /** 128 (DESIGN §9). */
    public static final int ALTERNATIVES_PER_BATCH_MAX_DEFAULT = 128;
    /** 32 (DESIGN §9). */
    public static final int OBSERVATIONS_MIN_DEFAULT = 32;
    /** 2 (DESIGN §9), also the largest value allowed. */
    public static final int REPLANS_MAX_DEFAULT = 2;
    /** 256 observations per class. */
    public static final int OBSERVATIONS_PER_CLASS_MAX_DEFAULT = 256;
    /** 256 peers (twice the default peer-session bound). */
    public static final int PEERS_TRACKED_MAX_DEFAULT = 256;
    /** 0.95. */
    public static final double ERROR_QUANTILE_DEFAULT = 0.95;
    /** 10 % of the fixed plan's prediction. */
    public static final double HYSTERESIS_FRACTION_DEFAULT = 0.10;
    /** 20 µs. */
    public static final long HYSTERESIS_MIN_NANOS_DEFAULT = 20_000;
    /** 1,024 traces. */
    public static final int TRACES_RETAINED_MAX_DEFAULT = 1_024;
    /** 256 owners. */
    public static final int LOAD_OWNERS_MAX_DEFAULT = 256;
    /** 2 s beyond the summary's window. */
    public static final long LOAD_VALIDITY_MS_DEFAULT = 2_000;

    /** Upper bounds accepted for the count settings (a bound, not a recommendation). */
    public static final int ALTERNATIVES_PER_BOUNDARY_LIMIT = 64;
    public static final int ALTERNATIVES_PER_BATCH_LIMIT = 4_096;
    public static final int COUNT_LIMIT = 65_536;

    public RoutePolicy {
        Objects.requireNonNull(selectionMode, "selectionMode");
        range("alternativesPerBoundaryMax", alternativesPerBoundaryMax, 1, ALTERNATIVES_PER_BOUNDARY_LIMIT);
        range("alternativesPerBatchMax", alternativesPerBatchMax, 1, ALTERNATIVES_PER_BATCH_LIMIT);
        range("observationsPerClassMax", observationsPerClassMax, 1, COUNT_LIMIT);
        range("observationsMin", observationsMin, 1, COUNT_LIMIT);
        range("replansMax", replansMax, 0, REPLANS_MAX_DEFAULT);
        range("peersTrackedMax", peersTrackedMax, 1, COUNT_LIMIT);
        range("tracesRetainedMax", tracesRetainedMax, 1, COUNT_LIMIT);
        range("loadOwnersMax", loadOwnersMax, 1, COUNT_LIMIT);
        range("loadValidityMs", loadValidityMs, 1, 3_600_000);
        range("hysteresisMinNanos", hysteresisMinNanos, 0, 1_000_000_000L);
        if (!(errorQuantile >= 0.5 && errorQuantile <= 1.0)) {
            throw new IllegalArgumentException("errorQuantile must be in [0.5, 1], got " + errorQuantile);
        }
        if (!(hysteresisFraction >= 0 && hysteresisFraction <= 1.0)) {
            throw new IllegalArgumentException("hysteresisFraction must be in [0, 1], got " + hysteresisFraction);
        }
        if (alternativesPerBoundaryMax > alternativesPerBatchMax) {
            throw new IllegalArgumentException("alternativesPerBoundaryMax (" + alternativesPerBoundaryMax
                    + ") must not exceed alternativesPerBatchMax (" + alternativesPerBatchMax + ")");
        }
        if (observationsMin > observationsPerClassMax) {
            throw new IllegalArgumentException("observationsMin (" + observationsMin + ") must not exceed observationsPerClassMax ("
                    + observationsPerClassMax + "): a class could never be sampled");
        }
    }

    /** The defaults above. */
    public static RoutePolicy defaults() {
        return new RoutePolicy(SELECTION_MODE_DEFAULT, ALTERNATIVES_PER_BOUNDARY_MAX_DEFAULT, ALTERNATIVES_PER_BATCH_MAX_DEFAULT,
                OBSERVATIONS_MIN_DEFAULT, REPLANS_MAX_DEFAULT, OBSERVATIONS_PER_CLASS_MAX_DEFAULT, PEERS_TRACKED_MAX_DEFAULT,
                ERROR_QUANTILE_DEFAULT, HYSTERESIS_FRACTION_DEFAULT, HYSTERESIS_MIN_NANOS_DEFAULT, TRACES_RETAINED_MAX_DEFAULT,
                LOAD_OWNERS_MAX_DEFAULT, LOAD_VALIDITY_MS_DEFAULT);
    }

    /**
     * The Manager's options: {@code --route-alternatives-per-boundary-max}, {@code --route-alternatives-per-batch-max},
     * {@code --route-observations-min}, {@code --route-replans-max}; everything else at its default.
     *
     * @throws IllegalArgumentException naming the setting (and the other side of a broken relation)
     */
    public static RoutePolicy fromManagerOptions(int alternativesPerBoundaryMax, int alternativesPerBatchMax,
            int observationsMin, int replansMax) {
        return defaults().withSearch(alternativesPerBoundaryMax, alternativesPerBatchMax)
                .withObservationsMin(observationsMin).withReplansMax(replansMax);
    }

    public RoutePolicy withSelectionMode(SelectionMode m) {
        return new RoutePolicy(m, alternativesPerBoundaryMax, alternativesPerBatchMax, observationsMin, replansMax,
                observationsPerClassMax, peersTrackedMax, errorQuantile, hysteresisFraction, hysteresisMinNanos,
                tracesRetainedMax, loadOwnersMax, loadValidityMs);
    }

    public RoutePolicy withSearch(int perBoundaryMax, int perBatchMax) {
        return new RoutePolicy(selectionMode, perBoundaryMax, perBatchMax, observationsMin, replansMax,
                observationsPerClassMax, peersTrackedMax, errorQuantile, hysteresisFraction, hysteresisMinNanos,
                tracesRetainedMax, loadOwnersMax, loadValidityMs);
    }

    public RoutePolicy withObservationsMin(int n) {
        return new RoutePolicy(selectionMode, alternativesPerBoundaryMax, alternativesPerBatchMax, n, replansMax,
                observationsPerClassMax, peersTrackedMax, errorQuantile, hysteresisFraction, hysteresisMinNanos,
                tracesRetainedMax, loadOwnersMax, loadValidityMs);
    }

    public RoutePolicy withReplansMax(int n) {
        return new RoutePolicy(selectionMode, alternativesPerBoundaryMax, alternativesPerBatchMax, observationsMin, n,
                observationsPerClassMax, peersTrackedMax, errorQuantile, hysteresisFraction, hysteresisMinNanos,
                tracesRetainedMax, loadOwnersMax, loadValidityMs);
    }

    public RoutePolicy withObservationWindow(int perClassMax, int peersMax) {
        return new RoutePolicy(selectionMode, alternativesPerBoundaryMax, alternativesPerBatchMax, observationsMin, replansMax,
                perClassMax, peersMax, errorQuantile, hysteresisFraction, hysteresisMinNanos, tracesRetainedMax,
                loadOwnersMax, loadValidityMs);
    }

    public RoutePolicy withHysteresis(double fraction, long minNanos) {
        return new RoutePolicy(selectionMode, alternativesPerBoundaryMax, alternativesPerBatchMax, observationsMin, replansMax,
                observationsPerClassMax, peersTrackedMax, errorQuantile, fraction, minNanos, tracesRetainedMax,
                loadOwnersMax, loadValidityMs);
    }

    public RoutePolicy withErrorQuantile(double q) {
        return new RoutePolicy(selectionMode, alternativesPerBoundaryMax, alternativesPerBatchMax, observationsMin, replansMax,
                observationsPerClassMax, peersTrackedMax, q, hysteresisFraction, hysteresisMinNanos, tracesRetainedMax,
                loadOwnersMax, loadValidityMs);
    }

    public RoutePolicy withTracesRetainedMax(int n) {
        return new RoutePolicy(selectionMode, alternativesPerBoundaryMax, alternativesPerBatchMax, observationsMin, replansMax,
                observationsPerClassMax, peersTrackedMax, errorQuantile, hysteresisFraction, hysteresisMinNanos, n,
                loadOwnersMax, loadValidityMs);
    }

    public RoutePolicy withLoadEvidence(int ownersMax, long validityMs) {
        return new RoutePolicy(selectionMode, alternativesPerBoundaryMax, alternativesPerBatchMax, observationsMin, replansMax,
                observationsPerClassMax, peersTrackedMax, errorQuantile, hysteresisFraction, hysteresisMinNanos,
                tracesRetainedMax, ownersMax, validityMs);
    }

    /** The hysteresis margin for a fixed plan predicted at {@code fixedMeanNanos}. */
    public double hysteresisNanos(double fixedMeanNanos) {
        return Math.max(hysteresisMinNanos, hysteresisFraction * fixedMeanNanos);
    }

    private static void range(String name, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "], got " + v);
        }
    }
}
