package orbitkv.recovery.plan;

import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.Decision;
import orbitkv.recovery.DecisionReason;
import orbitkv.recovery.Demand;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.Plan;
import orbitkv.recovery.Prediction;
import orbitkv.recovery.PrefixStop;
import orbitkv.recovery.Route;
import orbitkv.recovery.RouteBlock;
import orbitkv.recovery.RouteClass;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.SelectionMode;

/**
 * The planner (ROUTE-1..ROUTE-6, IDX-14): eligibility and the recoverable prefix, the fixed plan, the capacity
 * constraint, then (SHADOW and COST_DRIVEN) the bounded search and the switch rule. Pure: it reads the estimates
 * it is given and changes nothing.
 *
 * <p>Switch rule: with F the fixed plan and A the search's best complete alternative, both priced only from classes
 * with at least {@code observationsMin} comparable successes, switch iff A differs from F,
 * {@code mean(F) - mean(A) > error(F) + error(A) + hysteresis(F)} and {@code riskAdjusted(A) < riskAdjusted(F)},
 * where {@code hysteresis(F) = max(hysteresisMinNanos, hysteresisFraction * mean(F))}. A fixed plan with a peer route
 * beyond the demand's lane headroom ({@link orbitkv.recovery.LaneHeadroom}, issue 39 item 6) is predicted refused
 * (success probability 0): an alternative whose routes all fit is then a switch whatever the means (ROUTE-3: a
 * constraint, never seconds).
 *
 * <p>Cost (issue 24): the decision itself ({@link #decide}) allocates nothing on the steady path: every table,
 * price, partial alternative and span it writes lives in a {@link PlanScratch} that is reused. Only the answer
 * {@link #plan} returns is allocated (its routes, their blocks, the decision record and its summary text).
 *
 * <p>Threading contract: a planner is shared by every request of one selection and is thread-safe. Each
 * {@link #plan} borrows a scratch from a pool of {@value #SCRATCHES_RETAINED_MAX} for the length of the call, so
 * a scratch has one owner at a time and never escapes into the returned {@link Plan}.
 */
public final class Planner {
    private static final int SUMMARY_ROUTES_MAX = 8;
    /**
     * Scratches kept by one planner. Decisions never block, so a virtual thread is not unmounted inside one and the
     * number running at once is at most the carrier threads (the cores); 16 covers 16 cores. Beyond it a decision
     * makes its own scratch (correct, slower; counted by the pool).
     */
    static final int SCRATCHES_RETAINED_MAX = 16;

    private final RoutePolicy policy;
    private final ScratchPool scratches;

    public Planner(RoutePolicy policy) {
        this.policy = policy;
        this.scratches = new ScratchPool(SCRATCHES_RETAINED_MAX, () -> new PlanScratch(policy));
    }

    /**
     * Plans {@code demand} from index {@code from} on.
     *
     * @param bytesBefore payload bytes already delivered before {@code from} (they count against the capacity)
     * @param exclusions this request's rejected evidence
     * @param costs the shared estimates (null = no estimate)
     */
    public Plan plan(Demand demand, Evidence evidence, int from, long bytesBefore, Exclusions exclusions,
            Function<RouteClass, CostEstimate> costs) {
        PlanScratch s = scratches.borrow();
        try {
            decide(demand, evidence, from, bytesBefore, exclusions, costs, s);
            return materialize(s);
        } finally {
            scratches.release(s);
        }
    }

    /**
     * The decision of {@link #plan} without its answer: the reason it would report, from a pooled scratch. For the
     * allocation gate and the benchmark; allocates nothing on the steady path.
     */
    DecisionReason decideOnly(Demand demand, Evidence evidence, int from, long bytesBefore, Exclusions exclusions,
            Function<RouteClass, CostEstimate> costs) {
        PlanScratch s = scratches.borrow();
        try {
            decide(demand, evidence, from, bytesBefore, exclusions, costs, s);
            return s.reason;
        } finally {
            scratches.release(s);
        }
    }

    /** The pool's counters (tests). */
    ScratchPool scratches() {
        return scratches;
    }

    /** Decides into {@code s}, which the caller owns for the call. */
    void decide(Demand demand, Evidence evidence, int from, long bytesBefore, Exclusions exclusions,
            Function<RouteClass, CostEstimate> costs, PlanScratch s) {
        s.start(from);
        if (!demand.target().supported()) {
            s.empty = true;
            s.stop = PrefixStop.TARGET_UNSUPPORTED;
            return;
        }
        EligibleWindow w = s.window;
        w.fill(demand, evidence, from, exclusions);
        fitCapacity(w, demand.destinationBytesMax() - bytesBefore, s.fixed);
        s.stop = w.stop;
        if (w.end == from) {
            s.empty = true;
            return;
        }
        SourcePrices prices = s.prices;
        prices.price(w, costs, policy.observationsMin(), demand.network());
        if (prices.predict(w, s.fixed)) {
            s.fixedPriced = true;
            s.fixedMean = prices.predictedMean;
            s.fixedError = prices.predictedError;
            s.fixedSurvival = prices.predictedSurvival;
            s.fixedBlocked = prices.predictedBlocked;
        }
        SelectionMode mode = policy.selectionMode();
        if (mode == SelectionMode.FIXED) {
            s.reason = DecisionReason.FIXED_MODE;
            return;
        }
        if (!s.fixedPriced) {
            s.reason = DecisionReason.UNSAMPLED;
            return;
        }
        AlternativeSearch search = s.search;
        search.run(w, prices);
        s.evaluated = search.evaluated;
        s.pruned = search.pruned;
        AlternativeSearch.Partial best = search.best;
        if (search.exhausted || best == null) {
            s.reason = DecisionReason.SEARCH_EXHAUSTED;
            return;
        }
        AlternativeSearch.spans(best, s.alternative);
        s.alternativeFound = true;
        s.alternativeMean = best.mean;
        s.alternativeError = best.error;
        s.alternativeSurvival = best.survival;
        if (s.alternative.sameAs(s.fixed)) {
            s.reason = DecisionReason.FIXED_IS_BEST;
        } else if (s.fixedBlocked && best.survival > 0) { // F is predicted refused by its lane, A is not (ROUTE-3)
            s.reason = DecisionReason.SWITCH;
        } else if (switchHolds(s.fixedMean, s.fixedError, s.fixedSurvival, best.mean, best.error, best.survival)) {
            s.reason = DecisionReason.SWITCH;
        } else {
            s.reason = DecisionReason.WITHIN_MARGIN;
        }
        s.alternativeExecuted = s.reason == DecisionReason.SWITCH && mode == SelectionMode.COST_DRIVEN;
    }

    /** The answer of the decision in {@code s}: the only allocation of a plan on the steady path. */
    private Plan materialize(PlanScratch s) {
        if (s.empty) {
            return new Plan(s.from, List.of(), s.from, s.stop, 0, empty(DecisionReason.EMPTY));
        }
        EligibleWindow w = s.window;
        Optional<Prediction> fixed = s.fixedPriced ? Optional.of(new Prediction(s.fixedMean, s.fixedError, s.fixedSurvival))
                : Optional.empty();
        Optional<Prediction> alternative = s.alternativeFound
                ? Optional.of(new Prediction(s.alternativeMean, s.alternativeError, s.alternativeSurvival)) : Optional.empty();
        Decision d = new Decision(policy.selectionMode(), s.reason, s.alternativeExecuted, fixed, alternative,
                s.alternativeFound ? summary(w, s.alternative) : "", s.evaluated, s.pruned);
        return new Plan(s.from, routes(w, s.alternativeExecuted ? s.alternative : s.fixed), w.end, w.stop,
                w.eligibleSources(), d);
    }

    /** The switch rule (ROUTE-6); see the class comment. */
    boolean switchHolds(Prediction fixed, Prediction alternative) {
        return switchHolds(fixed.meanNanos(), fixed.errorNanos(), fixed.successProbability(), alternative.meanNanos(),
                alternative.errorNanos(), alternative.successProbability());
    }

    private boolean switchHolds(double fMean, double fError, double fSurvival, double aMean, double aError, double aSurvival) {
        double gain = fMean - aMean;
        double margin = fError + aError + policy.hysteresisNanos(fMean);
        return gain > margin && riskAdjusted(aMean, aError, aSurvival) < riskAdjusted(fMean, fError, fSurvival);
    }

    /** {@link Prediction#riskAdjustedNanos()} on primitives (the decision keeps its predictions unboxed). */
    static double riskAdjusted(double mean, double error, double survival) {
        return survival == 0 ? Double.POSITIVE_INFINITY : (mean + error) / survival;
    }

    /**
     * The fixed plan within the capacity, into {@code out}: when its bytes would exceed {@code capacity}, the window
     * is cut before the first key that does not fit and the fixed plan is recomputed on the shorter window (a
     * shorter window can change a tie), until it fits.
     */
    private static void fitCapacity(EligibleWindow w, long capacity, Spans out) {
        while (true) {
            FixedPolicy.spans(w, out);
            long used = 0;
            int cutAt = -1;
            outer:
            for (int k = 0; k < out.size(); k++) {
                int source = out.source(k);
                for (int i = out.from(k); i < out.to(k); i++) {
                    used += w.size(source, i);
                    if (used > capacity) {
                        cutAt = i;
                        break outer;
                    }
                }
            }
            if (cutAt < 0) {
                return;
            }
            w.cut(cutAt, PrefixStop.DESTINATION_CAPACITY);
        }
    }

    private static List<Route> routes(EligibleWindow w, Spans spans) {
        Route[] out = new Route[spans.size()];
        for (int k = 0; k < out.length; k++) {
            int source = spans.source(k);
            RouteBlock[] blocks = new RouteBlock[spans.to(k) - spans.from(k)];
            for (int i = 0; i < blocks.length; i++) {
                blocks[i] = w.block(source, spans.from(k) + i);
            }
            out[k] = new Route(w.source(source), spans.from(k), List.of(blocks));
        }
        return List.of(out);
    }

    /** {@code local-dram[0,3)+peer-dram@n2/1[3,8)}, at most {@value #SUMMARY_ROUTES_MAX} routes then {@code +N}. */
    static String summary(EligibleWindow w, Spans spans) {
        StringBuilder b = new StringBuilder(64);
        for (int i = 0; i < spans.size(); i++) {
            if (i == SUMMARY_ROUTES_MAX) {
                b.append("+").append(spans.size() - i);
                break;
            }
            if (i > 0) {
                b.append('+');
            }
            b.append(RouteText.source(w.source(spans.source(i)))).append('[').append(spans.from(i)).append(',')
                    .append(spans.to(i)).append(')');
        }
        return b.toString();
    }

    private Decision empty(DecisionReason reason) {
        return new Decision(policy.selectionMode(), reason, false, Optional.empty(), Optional.empty(), "", 0, 0);
    }
}
