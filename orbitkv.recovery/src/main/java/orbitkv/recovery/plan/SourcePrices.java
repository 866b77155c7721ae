package orbitkv.recovery.plan;

import java.util.Arrays;
import java.util.function.Function;
import java.util.Optional;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.LaneHeadroom;
import orbitkv.recovery.RouteClass;
import orbitkv.recovery.RouteSource;

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
    /**
     * Bytes one route of the source may take from its network lane (issue 39 item 6, ROUTE-3): the demand's lane
     * headroom for a peer source, unbounded for a local one or without a network constraint. A route beyond it is
     * predicted refused (success probability 0), never as if it would run.
     */
    long[] laneFree = new long[8];
    /** READs one peer route has in flight at once: it takes its this many largest blocks from the lane. */
    int routeReads = 1;

    /** The last {@link #predict}: mean, error and survival of the spans (valid iff it returned true). */
    double predictedMean;
    double predictedError;
    double predictedSurvival;
    /** The last {@link #predict} found a route beyond its lane's headroom (its survival is then 0). */
    boolean predictedBlocked;

    void price(EligibleWindow w, Function<RouteClass, CostEstimate> costs, int observationsMin,
            Optional<LaneHeadroom> network) {
        int n = w.sourceCount();
        if (n > sampled.length) {
            int c = Math.max(n, sampled.length * 2);
            sampled = Arrays.copyOf(sampled, c);
            fixed = Arrays.copyOf(fixed, c);
            perByte = Arrays.copyOf(perByte, c);
            error = Arrays.copyOf(error, c);
            survival = Arrays.copyOf(survival, c);
            laneFree = Arrays.copyOf(laneFree, c);
        }
        long free = network.isPresent() ? network.get().freeBytes() : Long.MAX_VALUE;
        routeReads = network.isPresent() ? network.get().routeReadsInFlight() : 1;
        for (int s = 0; s < n; s++) {
            CostEstimate e = costs.apply(w.routeClass(s));
            boolean priced = e != null && e.sampled(observationsMin);
            sampled[s] = priced;
            fixed[s] = priced ? e.fixedNanos() : 0;
            perByte[s] = priced ? e.nanosPerByte() : 0;
            error[s] = priced ? e.errorNanos() : 0;
            survival[s] = priced ? 1 - e.riskRate() : 0;
            laneFree[s] = w.source(s) instanceof RouteSource.Peer ? free : Long.MAX_VALUE;
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
        boolean blocked = false;
        for (int i = 0; i < spans.size(); i++) {
            int s = spans.source(i);
            if (!sampled[s]) {
                return false;
            }
            mean += fixed[s] + perByte[s] * w.bytes(s, spans.from(i), spans.to(i));
            err += error[s];
            surv *= survival[s];
            if (blocked(w, s, spans.from(i), spans.to(i))) { // refused at its credits: a constraint, not seconds
                blocked = true;
                surv = 0;
            }
        }
        predictedBlocked = blocked;
        predictedMean = mean;
        predictedError = err;
        predictedSurvival = surv;
        return true;
    }

    /**
     * True iff a route of source {@code s} over keys [from, to) takes more from its lane than the lane's headroom: the
     * bytes of its {@link #routeReads} largest blocks (ROUTE-3, issue 39 item 6). Allocates nothing.
     */
    boolean blocked(EligibleWindow w, int s, int from, int to) {
        long free = laneFree[s];
        if (free == Long.MAX_VALUE || w.bytes(s, from, to) <= free) {
            return false;
        }
        long need = 0;
        long lastSize = Long.MAX_VALUE;
        int lastKey = Integer.MAX_VALUE;
        for (int r = 0; r < routeReads; r++) { // the r-th largest (size, key) below the previous one
            long bestSize = -1;
            int bestKey = -1;
            for (int i = from; i < to; i++) {
                long size = w.size(s, i);
                boolean below = size < lastSize || size == lastSize && i < lastKey;
                if (below && (size > bestSize || size == bestSize && i > bestKey)) {
                    bestSize = size;
                    bestKey = i;
                }
            }
            if (bestKey < 0) {
                break;
            }
            need += bestSize;
            lastSize = bestSize;
            lastKey = bestKey;
        }
        return need > free;
    }
}
