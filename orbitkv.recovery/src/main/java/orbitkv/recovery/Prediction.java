package orbitkv.recovery;

/**
 * A predicted time until a plan's state is usable (ROUTE-3, ROUTE-5), from the cost model's estimates of
 * each route's class. A prediction is never an observation: there is no conversion between the two types and
 * the cost model accepts only observations produced by executed routes (ROUTE-6).
 *
 * @param meanNanos predicted critical path: the sum of each route's fixed cost plus bytes over its rate (routes run
 *     one after another; an authorization overlapped with the previous READ is inside that READ's observed time,
 *     so nothing is counted twice)
 * @param errorNanos empirical upper error bound: the sum of each route class's error quantile
 * @param successProbability product over routes of (1 - the class's failure, timeout and refusal rate)
 */
public record Prediction(double meanNanos, double errorNanos, double successProbability) {
    public Prediction {
        if (!(meanNanos >= 0) || !(errorNanos >= 0) || !(successProbability >= 0 && successProbability <= 1)) {
            throw new IllegalArgumentException("prediction out of range: " + meanNanos + ", " + errorNanos + ", " + successProbability);
        }
    }

    /**
     * The risk-adjusted upper time: (mean + error) / success probability, the number alternatives are ranked
     * by; infinite when every recent attempt failed.
     */
    public double riskAdjustedNanos() {
        return successProbability == 0 ? Double.POSITIVE_INFINITY : (meanNanos + errorNanos) / successProbability;
    }
}
