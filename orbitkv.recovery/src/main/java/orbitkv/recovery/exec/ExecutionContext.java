package orbitkv.recovery.exec;

import java.util.Optional;
import java.util.function.Function;
import java.util.function.LongSupplier;
import orbitkv.membership.Incarnation;
import orbitkv.recovery.LoadSummary;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.cost.CostModel;
import orbitkv.recovery.plan.Planner;
import orbitkv.recovery.trace.RouteCounters;

/**
 * What every restore of one selection shares: the policy, the planner, the cost model (the only place observations
 * go), the counters, the clock and the load evidence (read for traces only).
 */
public record ExecutionContext(RoutePolicy policy, Planner planner, CostModel costs, RouteCounters counters, LongSupplier clock,
        Function<Incarnation, Optional<LoadSummary.Aged>> loads) {}
