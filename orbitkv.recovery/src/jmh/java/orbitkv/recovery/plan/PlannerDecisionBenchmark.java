package orbitkv.recovery.plan;

import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.DecisionReason;
import orbitkv.recovery.Demand;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.Plan;
import orbitkv.recovery.RouteClass;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.SelectionMode;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Planner decision time (issue 14 goal: p99 <= 50 us for 128 alternatives; issue 24: 0 B allocated per decision
 * after warm-up), SampleTime so the percentiles are reported; run with {@code -prof gc} for the allocation per call.
 * {@code search128}: the {@link Search128} shape (128 keys of 16 KiB, local DRAM + 7 peers in three blocks of
 * availability, every class sampled), COST_DRIVEN: the search evaluates exactly 128 alternatives without exhausting
 * the default budget; eligibility over 128 keys x 8 sources is included, and so is the answer ({@code Plan}: its routes, 128 route blocks, the decision record and summary).
 * {@code search128Decision}: the same decision without building the answer ({@code Planner.decideOnly}, the same
 * pooled scratch {@code plan} uses): the part issue 24 requires to allocate nothing. {@code fixedOnly} and
 * {@code fixedDecision}: the same evidence in FIXED mode (eligibility and the fixed plan, no search), with and
 * without the answer. Setup checks the evaluated count and the decision. The empty {@code Exclusions} is made once
 * (it is the caller's, and a request without refusals never writes it).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(3)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class PlannerDecisionBenchmark {
    Demand demand;
    Evidence evidence;
    Planner cost;
    Planner fixed;
    Function<RouteClass, CostEstimate> costs;
    final Exclusions none = new Exclusions();

    @Setup
    public void setup() {
        Search128 shape = Search128.build();
        demand = shape.demand();
        evidence = shape.evidence();
        costs = shape.costs();
        cost = new Planner(RoutePolicy.defaults().withSelectionMode(SelectionMode.COST_DRIVEN));
        fixed = new Planner(RoutePolicy.defaults().withSelectionMode(SelectionMode.FIXED));
        Plan p = search128();
        if (p.decision().alternativesEvaluated() != Search128.ALTERNATIVES || p.decision().reason() == DecisionReason.SEARCH_EXHAUSTED
                || p.prefixKeys() != Search128.KEYS || search128Decision() != p.decision().reason()) {
            throw new IllegalStateException("benchmark shape broken: " + p.decision());
        }
    }

    @Benchmark
    public Plan search128() {
        return cost.plan(demand, evidence, 0, 0, none, costs);
    }

    @Benchmark
    public DecisionReason search128Decision() {
        return cost.decideOnly(demand, evidence, 0, 0, none, costs);
    }

    @Benchmark
    public Plan fixedOnly() {
        return fixed.plan(demand, evidence, 0, 0, none, costs);
    }

    @Benchmark
    public DecisionReason fixedDecision() {
        return fixed.decideOnly(demand, evidence, 0, 0, none, costs);
    }
}
