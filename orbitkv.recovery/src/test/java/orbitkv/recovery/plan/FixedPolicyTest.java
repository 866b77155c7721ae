package orbitkv.recovery.plan;

import static orbitkv.inventory.Medium.DRAM;
import static orbitkv.inventory.Medium.SSD;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import orbitkv.index.Replica;
import orbitkv.inventory.Medium;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.recovery.DecisionReason;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.KeyEvidence;
import orbitkv.recovery.LocalResidence;
import orbitkv.recovery.Plan;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.SelectionMode;
import orbitkv.recovery.fixtures.Ev;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The fixed deterministic policy (ROUTE-4, ROUTE-6; DESIGN §8). */
@Tag("unit")
class FixedPolicyTest {
    private final Planner planner = new Planner(RoutePolicy.defaults().withSelectionMode(SelectionMode.FIXED));

    private String routes(Ev ev) {
        return routes(planner.plan(ev.demand(0), ev.build(), 0, 0, new Exclusions(), c -> null));
    }

    static String routes(Plan p) {
        StringBuilder b = new StringBuilder();
        p.routes().forEach(r -> b.append(b.isEmpty() ? "" : " ").append(RouteText.source(r.source())).append('[')
                .append(r.fromIndex()).append(',').append(r.toIndex()).append(')'));
        return b.toString();
    }

    @Test
    @DisplayName("ROUTE-4 the longest legal span wins over local-first (fewest routes)")
    void longestSpan() {
        assertThat(routes(Ev.keys(4).local(0, 3, DRAM).peer("b", 0, 4, DRAM))).isEqualTo("peer-dram@b/1[0,4)");
    }

    @Test
    @DisplayName("ROUTE-4 at an equal span: local before peer, DRAM before SSD")
    void kindOrder() {
        assertThat(routes(Ev.keys(3).peer("b", 0, 3, DRAM).local(0, 3, SSD))).isEqualTo("local-ssd[0,3)");
        assertThat(routes(Ev.keys(3).local(0, 3, SSD).local(0, 3, DRAM))).isEqualTo("local-dram[0,3)");
        assertThat(routes(Ev.keys(3).peer("b", 0, 3, SSD).peer("c", 0, 3, DRAM))).isEqualTo("peer-dram@c/1[0,3)");
    }

    @Test
    @DisplayName("ROUTE-4 at an equal span and kind: fresh before stale, then owner node id, epoch, incarnation id")
    void ownerOrder() {
        assertThat(routes(Ev.keys(2).peer("c", 0, 2, DRAM).peer("b", 0, 2, DRAM))).isEqualTo("peer-dram@b/1[0,2)");
        Ev stale = Ev.keys(2).stalePeer("b", 0, 2, DRAM).peer("c", 0, 2, DRAM);
        assertThat(routes(planner.plan(stale.demand(0).withStaleHintsAllowed(true), stale.build(), 0, 0, new Exclusions(),
                c -> null))).isEqualTo("peer-dram@c/1[0,2)");
        Ev epochs = Ev.keys(2).peer(Ev.inc("b", 3), 0, 2, DRAM, false).peer(Ev.inc("b", 2), 0, 2, DRAM, false);
        assertThat(routes(epochs)).isEqualTo("peer-dram@b/2[0,2)");
    }

    @Test
    @DisplayName("ROUTE-4 a split lies only where owner or medium changes; spans are maximal")
    void splits() {
        assertThat(routes(Ev.keys(6).local(0, 2, DRAM).peer("b", 1, 5, DRAM).peer("c", 4, 6, SSD)))
                .isEqualTo("local-dram[0,2) peer-dram@b/1[2,5) peer-ssd@c/1[5,6)");
    }

    @Test
    @DisplayName("ROUTE-4 the fixed plan does not depend on replica order (seeded; replay with -Dorbitkv.seed=N)")
    void permutationInvariant() {
        long seed = Long.getLong("orbitkv.seed", System.nanoTime());
        System.out.println("FixedPolicyTest.permutationInvariant seed=" + seed + " (replay: -Dorbitkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        Planner cost = new Planner(RoutePolicy.defaults().withSelectionMode(SelectionMode.COST_DRIVEN).withObservationsMin(1));
        for (int round = 0; round < 300; round++) {
            Evidence e = randomEvidence(rnd);
            var demand = Ev.keys(e.keys().size()).demand(0).withStaleHintsAllowed(rnd.nextBoolean());
            var costs = PlannerDecisionTest.randomCosts(rnd);
            Plan base = planner.plan(demand, e, 0, 0, new Exclusions(), c -> null);
            Plan baseCost = cost.plan(demand, e, 0, 0, new Exclusions(), costs);
            for (int k = 0; k < 5; k++) {
                Evidence shuffled = shuffle(e, rnd);
                assertThat(planner.plan(demand, shuffled, 0, 0, new Exclusions(), c -> null)).as("seed %d round %d", seed, round)
                        .isEqualTo(base);
                assertThat(cost.plan(demand, shuffled, 0, 0, new Exclusions(), costs)).as("seed %d round %d (cost)", seed, round)
                        .isEqualTo(baseCost);
            }
            assertThat(base.decision().reason()).isIn(DecisionReason.FIXED_MODE, DecisionReason.EMPTY);
        }
    }

    static Evidence randomEvidence(Random rnd) {
        int n = 1 + rnd.nextInt(24);
        String[] nodes = {"a", "b", "c", "d"};
        List<KeyEvidence> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            List<LocalResidence> local = new ArrayList<>();
            for (Medium m : Medium.values()) {
                if (rnd.nextInt(4) == 0) {
                    local.add(new LocalResidence(m, 100 + i, 1000 + rnd.nextInt(3) * 1000));
                }
            }
            List<Replica> remote = new ArrayList<>();
            for (String node : nodes) {
                for (Medium m : Medium.values()) {
                    if (rnd.nextInt(3) == 0) {
                        Incarnation inc = rnd.nextInt(8) == 0
                                ? new Incarnation(new NodeId(node), new NodeEpoch(2), Ev.inc(node + "x").id())
                                : Ev.inc(node);
                        remote.add(new Replica(inc, m, 100 + i, 1000 + rnd.nextInt(3) * 1000, rnd.nextInt(6) == 0));
                    }
                }
            }
            keys.add(new KeyEvidence(Ev.key(i), local, remote, false));
        }
        return new Evidence(orbitkv.index.Coverage.PartialHints, 3, Evidence.allKinds(), keys);
    }

    static Evidence shuffle(Evidence e, Random rnd) {
        List<KeyEvidence> keys = new ArrayList<>();
        for (KeyEvidence k : e.keys()) {
            List<LocalResidence> l = new ArrayList<>(k.local());
            List<Replica> r = new ArrayList<>(k.remote());
            Collections.shuffle(l, rnd);
            Collections.shuffle(r, rnd);
            keys.add(new KeyEvidence(k.key(), l, r, k.truncated()));
        }
        return new Evidence(e.coverage(), e.viewGeneration(), e.qualifiedKinds(), keys);
    }
}
