package orbitkv.recovery.plan;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
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
import orbitkv.recovery.Demand;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.KeyEvidence;
import orbitkv.recovery.LocalResidence;
import orbitkv.recovery.RouteClass;
import orbitkv.recovery.RouteKind;

/**
 * The planner's 128-alternative shape (issue 14 and 24 goals), shared by {@code PlannerDecisionBenchmark} and
 * {@link PlannerAllocationTest}: a 128-key demand of 16 KiB blocks in three blocks of availability (local DRAM + 7
 * peers, one peer missing in keys 43..84), every class sampled; a COST_DRIVEN search evaluates exactly 128
 * alternatives (8 + 8 x 7 + 8 x 8) without exhausting the default budget.
 */
record Search128(Demand demand, Evidence evidence, Function<RouteClass, CostEstimate> costs) {
    static final int KEYS = 128;
    static final long BLOCK = 16 << 10;
    static final int ALTERNATIVES = 128;

    static Search128 build() {
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
        return new Search128(Demand.hostReady(ns, keys, 0), new Evidence(Coverage.CompleteAtWatermarks, 1, Evidence.allKinds(), ev),
                est::get);
    }
}
