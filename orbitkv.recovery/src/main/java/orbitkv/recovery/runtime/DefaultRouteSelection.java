package orbitkv.recovery.runtime;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongSupplier;
import orbitkv.membership.Incarnation;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.Demand;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.LoadSummary;
import orbitkv.recovery.Plan;
import orbitkv.recovery.Restore;
import orbitkv.recovery.RouteClass;
import orbitkv.recovery.RouteMetrics;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.RouteSelection;
import orbitkv.recovery.TracePage;
import orbitkv.recovery.TraceSampling;
import orbitkv.recovery.TransferPorts;
import orbitkv.recovery.cost.CostModel;
import orbitkv.recovery.evidence.LoadStore;
import orbitkv.recovery.exec.ExecutionContext;
import orbitkv.recovery.exec.RestoreRun;
import orbitkv.recovery.plan.Exclusions;
import orbitkv.recovery.plan.Planner;
import orbitkv.recovery.trace.RouteCounters;
import orbitkv.recovery.trace.TraceFile;
import orbitkv.recovery.trace.TraceRing;

/** The one {@link RouteSelection} implementation: wires the planner, cost model, executor, load store and traces. */
public final class DefaultRouteSelection implements RouteSelection {
    private final RoutePolicy policy;
    private final LongSupplier clock;
    private final Planner planner;
    private final CostModel costs;
    /** The cost model's lookup, made once (a bound method reference made per call is an object per call). */
    private final Function<RouteClass, CostEstimate> estimates;
    private final LoadStore loads;
    private final RouteCounters counters = new RouteCounters();
    private final TraceRing ring;
    private final TraceFile file;
    private final ExecutionContext ctx;
    private final AtomicLong traceIds = new AtomicLong();

    public DefaultRouteSelection(RoutePolicy policy, TraceSampling sampling, LongSupplier clock) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.planner = new Planner(policy);
        this.costs = new CostModel(policy.observationsPerClassMax(), policy.peersTrackedMax(), policy.errorQuantile());
        this.estimates = costs::estimate;
        this.loads = new LoadStore(policy.loadOwnersMax(), policy.loadValidityMs());
        this.ring = new TraceRing(policy.tracesRetainedMax());
        this.file = new TraceFile(Objects.requireNonNull(sampling, "sampling"));
        this.ctx = new ExecutionContext(policy, planner, costs, counters, clock, o -> loads.get(o, clock.getAsLong()));
    }

    @Override
    public RoutePolicy policy() {
        return policy;
    }

    @Override
    public Plan plan(Demand demand, Evidence evidence) {
        evidence.requireMatches(demand);
        counters.plans.increment();
        return planner.plan(demand, evidence, 0, 0, new Exclusions(), estimates);
    }

    @Override
    public <D> Restore<D> restore(Demand demand, Evidence evidence, TransferPorts<D> ports) {
        evidence.requireMatches(demand);
        Objects.requireNonNull(ports, "ports");
        Restore<D> r = new RestoreRun<>(ctx, demand, evidence, ports, traceIds.incrementAndGet()).run();
        ring.add(r.trace());
        file.offer(r.trace());
        return r;
    }

    @Override
    public LoadSummary.Recorded recordLoad(LoadSummary summary) {
        return loads.record(Objects.requireNonNull(summary, "summary"), clock.getAsLong());
    }

    @Override
    public Optional<LoadSummary.Aged> load(Incarnation owner) {
        return loads.get(owner, clock.getAsLong());
    }

    @Override
    public List<CostEstimate> costs() {
        return costs.estimates();
    }

    @Override
    public TracePage traces(int limit, OptionalLong beforeId) {
        return ring.page(limit, beforeId);
    }

    @Override
    public RouteMetrics metrics() {
        return counters.snapshot(costs.observationsEvicted(), costs.peersEvicted(), file.counters(), loads.counters());
    }

    /** The sampled trace file, or null (diagnostics and tests). */
    public java.nio.file.Path traceFile() {
        return file.path();
    }

    @Override
    public void close() {
        file.close();
    }
}
