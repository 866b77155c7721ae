package orbitkv.recovery.plan;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import orbitkv.index.Coverage;
import orbitkv.index.Replica;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.DecisionReason;
import orbitkv.recovery.Demand;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.KeyEvidence;
import orbitkv.recovery.LocalResidence;
import orbitkv.recovery.Plan;
import orbitkv.recovery.RouteClass;
import orbitkv.recovery.RouteKind;
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
 * Planner decision time (issue 14 goal: p99 <= 50 us for 128 alternatives), SampleTime so the percentiles are
 * reported. {@code search128}: a 128-key demand of 16 KiB blocks in three blocks of availability (local DRAM + 7
 * peers, one peer missing in the middle block), every class sampled, COST_DRIVEN: the search evaluates exactly 128
 * alternatives (8 + 8 x 7 + 8 x 8) without exhausting the default budget; eligibility over 128 keys x 8 sources is
 * included. {@code fixedOnly}: the same evidence in FIXED mode (eligibility and the fixed plan, no search).
 * Setup checks the evaluated count and the decision.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class PlannerDecisionBenchmark {
    static final int KEYS = 128;
    static final long BLOCK = 16 << 10;

    Demand demand;
    Evidence evidence;
    Planner cost;
    Planner fixed;
    Function<RouteClass, CostEstimate> costs;

    @Setup
    public void setup() {
        Namespace ns = Namespace.utf8("bench-namespace");
        List<StateKey> keys = new ArrayList<>();
        List<KeyEvidence> ev = new ArrayList<>();
        Map<RouteClass, CostEstimate> est = new HashMap<>();
        est.put(RouteClass.local(RouteKind.LOCAL_DRAM),
                new CostEstimate(RouteClass.local(RouteKind.LOCAL_DRAM), 64, 0, 0, 0, 5_000, 0.1, 500, 0, 0));
        List<Incarnation> peers = new ArrayList<>();
        for (int p = 0; p < 7; p++) {
            String node = "peer-" + p;
            peers.add(new Incarnation(new NodeId(node), new NodeEpoch(1), UUID.nameUUIDFromBytes(node.getBytes(StandardCharsets.UTF_8))));
            RouteClass c = RouteClass.peer(RouteKind.PEER_DRAM, new NodeId(node));
            est.put(c, new CostEstimate(c, 64, 1, 0, 0, 40_000 + 3_000 * p, 0.5 + 0.1 * p, 4_000, 0, 0));
        }
        for (int i = 0; i < KEYS; i++) {
            StateKey k = new StateKey(ns, ("chained-block-hash-" + i).getBytes(StandardCharsets.UTF_8));
            keys.add(k);
            boolean middle = i >= 43 && i < 85;
            List<Replica> remote = new ArrayList<>();
            for (int p = 0; p < 7; p++) {
                if (!(middle && p == 3)) {
                    remote.add(new Replica(peers.get(p), Medium.DRAM, 1_000 + i, BLOCK, false));
                }
            }
            ev.add(new KeyEvidence(k, List.of(new LocalResidence(Medium.DRAM, 500 + i, BLOCK)), remote, false));
        }
        demand = Demand.hostReady(ns, keys, 0);
        evidence = new Evidence(Coverage.CompleteAtWatermarks, 1, Evidence.allKinds(), ev);
        costs = est::get;
        cost = new Planner(RoutePolicy.defaults().withSelectionMode(SelectionMode.COST_DRIVEN));
        fixed = new Planner(RoutePolicy.defaults().withSelectionMode(SelectionMode.FIXED));
        Plan p = search128();
        if (p.decision().alternativesEvaluated() != 128 || p.decision().reason() == DecisionReason.SEARCH_EXHAUSTED
                || p.prefixKeys() != KEYS) {
            throw new IllegalStateException("benchmark shape broken: " + p.decision());
        }
    }

    @Benchmark
    public Plan search128() {
        return cost.plan(demand, evidence, 0, 0, new Exclusions(), costs);
    }

    @Benchmark
    public Plan fixedOnly() {
        return fixed.plan(demand, evidence, 0, 0, new Exclusions(), costs);
    }
}
