package orbitkv.recovery.plan;

import java.util.ArrayList;
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
 * where {@code hysteresis(F) = max(hysteresisMinNanos, hysteresisFraction * mean(F))}.
 */
public final class Planner {
    private static final int SUMMARY_ROUTES_MAX = 8;

    private final RoutePolicy policy;

    public Planner(RoutePolicy policy) {
        this.policy = policy;
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
        if (!demand.target().supported()) {
            return new Plan(from, List.of(), from, PrefixStop.TARGET_UNSUPPORTED, 0, empty(DecisionReason.EMPTY));
        }
        EligibleWindow w = EligibleWindow.build(demand, evidence, from, exclusions);
        List<FixedPolicy.Span> fixed = fitCapacity(w, demand.destinationBytesMax() - bytesBefore);
        if (w.end == from) {
            return new Plan(from, List.of(), from, w.stop, 0, empty(DecisionReason.EMPTY));
        }
        SourcePrices prices = new SourcePrices(w, costs, policy.observationsMin());
        Prediction fixedPrediction = prices.predict(w, fixed);
        Decided d = decide(w, fixed, prices, fixedPrediction);
        List<FixedPolicy.Span> executed = d.decision.alternativeExecuted() ? d.alternative : fixed;
        return new Plan(from, routes(w, executed), w.end, w.stop, w.eligibleSources(), d.decision);
    }

    private record Decided(Decision decision, List<FixedPolicy.Span> alternative) {}

    private Decided decide(EligibleWindow w, List<FixedPolicy.Span> fixed, SourcePrices prices, Prediction fixedPrediction) {
        SelectionMode mode = policy.selectionMode();
        Optional<Prediction> fp = Optional.ofNullable(fixedPrediction);
        if (mode == SelectionMode.FIXED) {
            return new Decided(new Decision(mode, DecisionReason.FIXED_MODE, false, fp, Optional.empty(), "", 0, 0), null);
        }
        if (fixedPrediction == null) {
            return new Decided(new Decision(mode, DecisionReason.UNSAMPLED, false, fp, Optional.empty(), "", 0, 0), null);
        }
        AlternativeSearch.Result r = AlternativeSearch.run(w, prices, policy.alternativesPerBoundaryMax(),
                policy.alternativesPerBatchMax());
        if (r.exhausted() || r.best() == null) {
            return new Decided(new Decision(mode, DecisionReason.SEARCH_EXHAUSTED, false, fp, Optional.empty(), "",
                    r.evaluated(), r.pruned()), null);
        }
        List<FixedPolicy.Span> alt = AlternativeSearch.spans(r.best());
        Prediction ap = r.best().prediction();
        DecisionReason reason;
        if (alt.equals(fixed)) {
            reason = DecisionReason.FIXED_IS_BEST;
        } else if (switchHolds(fixedPrediction, ap)) {
            reason = DecisionReason.SWITCH;
        } else {
            reason = DecisionReason.WITHIN_MARGIN;
        }
        boolean execute = reason == DecisionReason.SWITCH && mode == SelectionMode.COST_DRIVEN;
        return new Decided(new Decision(mode, reason, execute, fp, Optional.of(ap), summary(w, alt), r.evaluated(), r.pruned()), alt);
    }

    /** The switch rule (ROUTE-6); see the class comment. */
    boolean switchHolds(Prediction fixed, Prediction alternative) {
        double gain = fixed.meanNanos() - alternative.meanNanos();
        double margin = fixed.errorNanos() + alternative.errorNanos() + policy.hysteresisNanos(fixed.meanNanos());
        return gain > margin && alternative.riskAdjustedNanos() < fixed.riskAdjustedNanos();
    }

    /**
     * The fixed plan within the capacity: when its bytes would exceed {@code capacity}, the window is cut before
     * the first key that does not fit and the fixed plan is recomputed on the shorter window (a shorter window can
     * change a tie), until it fits.
     */
    private static List<FixedPolicy.Span> fitCapacity(EligibleWindow w, long capacity) {
        while (true) {
            List<FixedPolicy.Span> spans = FixedPolicy.spans(w);
            long used = 0;
            int cutAt = -1;
            outer:
            for (FixedPolicy.Span sp : spans) {
                for (int i = sp.from(); i < sp.to(); i++) {
                    used += w.size(sp.source(), i);
                    if (used > capacity) {
                        cutAt = i;
                        break outer;
                    }
                }
            }
            if (cutAt < 0) {
                return spans;
            }
            w.cut(cutAt, PrefixStop.DESTINATION_CAPACITY);
        }
    }

    private static List<Route> routes(EligibleWindow w, List<FixedPolicy.Span> spans) {
        List<Route> out = new ArrayList<>(spans.size());
        for (FixedPolicy.Span sp : spans) {
            List<RouteBlock> blocks = new ArrayList<>(sp.to() - sp.from());
            for (int i = sp.from(); i < sp.to(); i++) {
                blocks.add(w.block(sp.source(), i));
            }
            out.add(new Route(w.sources[sp.source()], sp.from(), blocks));
        }
        return out;
    }

    /** {@code local-dram[0,3)+peer-dram@n2/1[3,8)}, at most {@value #SUMMARY_ROUTES_MAX} routes then {@code +N}. */
    static String summary(EligibleWindow w, List<FixedPolicy.Span> spans) {
        StringBuilder b = new StringBuilder(64);
        for (int i = 0; i < spans.size(); i++) {
            if (i == SUMMARY_ROUTES_MAX) {
                b.append("+").append(spans.size() - i);
                break;
            }
            FixedPolicy.Span sp = spans.get(i);
            if (i > 0) {
                b.append('+');
            }
            b.append(RouteText.source(w.sources[sp.source()])).append('[').append(sp.from()).append(',').append(sp.to()).append(')');
        }
        return b.toString();
    }

    private Decision empty(DecisionReason reason) {
        return new Decision(policy.selectionMode(), reason, false, Optional.empty(), Optional.empty(), "", 0, 0);
    }
}
