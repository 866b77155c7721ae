package orbitkv.recovery.plan;

import java.util.List;
import java.util.function.Function;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.Prediction;
import orbitkv.recovery.RouteClass;

/**
 * The cost model's estimates for the sources of one window, looked up once per plan (ROUTE-3). A source is
 * priced iff its class has at least {@code observationsMin} comparable successes (ROUTE-6).
 */
final class SourcePrices {
    final CostEstimate[] estimates;
    final boolean[] sampled;
    final double[] fixed;
    final double[] perByte;
    final double[] error;
    final double[] survival;

    SourcePrices(EligibleWindow w, Function<RouteClass, CostEstimate> costs, int observationsMin) {
        int n = w.sourceCount();
        estimates = new CostEstimate[n];
        sampled = new boolean[n];
        fixed = new double[n];
        perByte = new double[n];
        error = new double[n];
        survival = new double[n];
        for (int s = 0; s < n; s++) {
            CostEstimate e = costs.apply(RouteClass.of(w.sources[s]));
            estimates[s] = e;
            if (e != null && e.sampled(observationsMin)) {
                sampled[s] = true;
                fixed[s] = e.fixedNanos();
                perByte[s] = e.nanosPerByte();
                error[s] = e.errorNanos();
                survival[s] = 1 - e.riskRate();
            }
        }
    }

    /** The prediction of {@code spans}, or null when one of their sources is not sampled. */
    Prediction predict(EligibleWindow w, List<FixedPolicy.Span> spans) {
        double mean = 0;
        double err = 0;
        double surv = 1;
        for (FixedPolicy.Span sp : spans) {
            int s = sp.source();
            if (!sampled[s]) {
                return null;
            }
            mean += fixed[s] + perByte[s] * w.bytes(s, sp.from(), sp.to());
            err += error[s];
            surv *= survival[s];
        }
        return new Prediction(mean, err, surv);
    }
}
