package orbitkv.recovery.plan;

import java.util.Arrays;
import java.util.function.Function;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.RouteClass;

/**
 * The cost model's estimates for the sources of one window, looked up once per decision (ROUTE-3). A source is
 * priced iff its class has at least {@code observationsMin} comparable successes (ROUTE-6).
 *
 * <p>Reused: one instance lives in one {@link PlanScratch}; {@link #price} rewrites the first
 * {@code w.sourceCount()} entries (the arrays grow only when a window has more sources than any before). Not
 * thread-safe: its owner is the thread holding the scratch.
 */
final class SourcePrices {
    boolean[] sampled = new boolean[8];
    double[] fixed = new double[8];
    double[] perByte = new double[8];
    double[] error = new double[8];
    double[] survival = new double[8];

    /** The last {@link #predict}: mean, error and survival of the spans (valid iff it returned true). */
    double predictedMean;
    double predictedError;
    double predictedSurvival;

    void price(EligibleWindow w, Function<RouteClass, CostEstimate> costs, int observationsMin) {
        int n = w.sourceCount();
        if (n > sampled.length) {
            int c = Math.max(n, sampled.length * 2);
            sampled = Arrays.copyOf(sampled, c);
            fixed = Arrays.copyOf(fixed, c);
            perByte = Arrays.copyOf(perByte, c);
            error = Arrays.copyOf(error, c);
            survival = Arrays.copyOf(survival, c);
        }
        for (int s = 0; s < n; s++) {
            CostEstimate e = costs.apply(w.routeClass(s));
            boolean priced = e != null && e.sampled(observationsMin);
            sampled[s] = priced;
            fixed[s] = priced ? e.fixedNanos() : 0;
            perByte[s] = priced ? e.nanosPerByte() : 0;
            error[s] = priced ? e.errorNanos() : 0;
            survival[s] = priced ? 1 - e.riskRate() : 0;
        }
    }

    /**
     * Prices {@code spans} into {@link #predictedMean}, {@link #predictedError} and {@link #predictedSurvival};
     * false (nothing written) when one of their sources is not sampled.
     */
    boolean predict(EligibleWindow w, Spans spans) {
        double mean = 0;
        double err = 0;
        double surv = 1;
        for (int i = 0; i < spans.size(); i++) {
            int s = spans.source(i);
            if (!sampled[s]) {
                return false;
            }
            mean += fixed[s] + perByte[s] * w.bytes(s, spans.from(i), spans.to(i));
            err += error[s];
            surv *= survival[s];
        }
        predictedMean = mean;
        predictedError = err;
        predictedSurvival = surv;
        return true;
    }
}
