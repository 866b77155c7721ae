package orbitkv.recovery.plan;

import orbitkv.recovery.DecisionReason;
import orbitkv.recovery.PrefixStop;
import orbitkv.recovery.RoutePolicy;

/**
 * Everything one planner decision writes, reused by the next: the eligible window's rows, the prices, the search's
 * partials, the fixed and alternative spans, and the decision itself as primitives. The public {@code Plan} is
 * materialized from it by {@link Planner#plan} and shares nothing mutable with it.
 *
 * <p>Threading contract: a scratch has exactly one owner at a time. {@link Planner#plan} borrows one from the
 * planner's {@link ScratchPool} for the length of one call and returns it in a {@code finally}; a test or benchmark
 * that calls {@link Planner#decide} directly owns the scratch it passes. Nothing in it is safe to share, nothing
 * in it outlives the owner's next decision.
 */
final class PlanScratch {
    final EligibleWindow window = new EligibleWindow();
    final SourcePrices prices = new SourcePrices();
    final AlternativeSearch search;
    final Spans fixed = new Spans();
    final Spans alternative = new Spans();

    // the decision of the last Planner.decide
    int from;
    /** Nothing to plan: unsupported target or empty prefix; {@link #stop} says which. */
    boolean empty;
    PrefixStop stop;
    DecisionReason reason;
    boolean alternativeExecuted;
    boolean fixedPriced;
    double fixedMean;
    double fixedError;
    double fixedSurvival;
    /** The fixed plan has a peer route beyond its lane's headroom (issue 39 item 6): predicted refused. */
    boolean fixedBlocked;
    /** The search found a best complete alternative: {@link #alternative} and its prediction are valid. */
    boolean alternativeFound;
    double alternativeMean;
    double alternativeError;
    double alternativeSurvival;
    int evaluated;
    int pruned;

    PlanScratch(RoutePolicy policy) {
        this.search = new AlternativeSearch(policy.alternativesPerBoundaryMax(), policy.alternativesPerBatchMax());
    }

    /** Resets the decision fields before a decision. */
    void start(int fromIndex) {
        from = fromIndex;
        empty = false;
        stop = PrefixStop.COMPLETE;
        reason = DecisionReason.EMPTY;
        alternativeExecuted = false;
        fixedPriced = false;
        fixedBlocked = false;
        alternativeFound = false;
        evaluated = 0;
        pruned = 0;
        fixed.clear();
        alternative.clear();
    }

    /** Drops every reference to the request (demand, evidence owners, search chain) before the scratch is pooled. */
    void release() {
        window.release();
        search.release();
    }
}
