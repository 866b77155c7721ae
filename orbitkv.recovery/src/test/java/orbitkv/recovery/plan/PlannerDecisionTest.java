package orbitkv.recovery.plan;

import static orbitkv.inventory.Medium.DRAM;
import static orbitkv.inventory.Medium.SSD;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;
import orbitkv.index.Replica;
import orbitkv.membership.NodeId;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.DecisionReason;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.KeyEvidence;
import orbitkv.recovery.LocalResidence;
import orbitkv.recovery.Plan;
import orbitkv.recovery.Prediction;
import orbitkv.recovery.Route;
import orbitkv.recovery.RouteClass;
import orbitkv.recovery.RouteKind;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.RouteSource;
import orbitkv.recovery.SelectionMode;
import orbitkv.recovery.fixtures.Ev;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The cost-driven decision (ROUTE-3..ROUTE-6) on hand-made estimates. Scenario S: 4 keys of 4096 B; local DRAM holds
 * keys 0-2, peer b DRAM holds 0-3. Fixed plan F = peer b [0,4); the alternative A = local [0,3) + peer b [3,4).
 * Estimates: peer b 50 us + 100 ns/B, local DRAM 5 us + 0.1 ns/B, no error, no failure:
 * mean(F) = 50,000 + 100 * 16,384 = 1,688,400 ns; mean(A) = 5,000 + 1,228.8 + 50,000 + 409,600 = 465,828.8 ns;
 * gain = 1,222,571.2 ns; hysteresis = max(20,000, 10 % of 1,688,400) = 168,840 ns.
 */
@Tag("unit")
class PlannerDecisionTest {
    static final RouteClass PEER_B = RouteClass.peer(RouteKind.PEER_DRAM, new NodeId("b"));
    static final RouteClass LOCAL = RouteClass.local(RouteKind.LOCAL_DRAM);

    static CostEstimate est(RouteClass c, int successes, double fixed, double perByte, double error, int failures) {
        return new CostEstimate(c, successes, failures, 0, 0, fixed, perByte, error, 0, 0);
    }

    static Function<RouteClass, CostEstimate> costs(CostEstimate... es) {
        Map<RouteClass, CostEstimate> m = new HashMap<>();
        for (CostEstimate e : es) {
            m.put(e.routeClass(), e);
        }
        return m::get;
    }

    private static Plan scenario(SelectionMode mode, Function<RouteClass, CostEstimate> costs) {
        Ev ev = Ev.keys(4).local(0, 3, DRAM).peer("b", 0, 4, DRAM);
        return new Planner(RoutePolicy.defaults().withSelectionMode(mode)).plan(ev.demand(0), ev.build(), 0, 0, new Exclusions(), costs);
    }

    @Test
    @DisplayName("ROUTE-6 ROUTE-3 32 comparable successes and a gain beyond the margin: switch (executed in COST_DRIVEN)")
    void switches() {
        Plan p = scenario(SelectionMode.COST_DRIVEN, costs(est(PEER_B, 32, 50_000, 100, 0, 0), est(LOCAL, 32, 5_000, 0.1, 0, 0)));
        assertThat(p.decision().reason()).isEqualTo(DecisionReason.SWITCH);
        assertThat(p.decision().alternativeExecuted()).isTrue();
        assertThat(FixedPolicyTest.routes(p)).isEqualTo("local-dram[0,3) peer-dram@b/1[3,4)");
        assertThat(p.decision().fixed().orElseThrow().meanNanos()).isEqualTo(1_688_400.0);
        assertThat(p.decision().alternative().orElseThrow().meanNanos()).isCloseTo(465_828.8, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(p.decision().alternativeSummary()).isEqualTo("local-dram[0,3)+peer-dram@b/1[3,4)");
    }

    @Test
    @DisplayName("ROUTE-6 SHADOW predicts the switch but executes the fixed plan")
    void shadow() {
        Plan p = scenario(SelectionMode.SHADOW, costs(est(PEER_B, 32, 50_000, 100, 0, 0), est(LOCAL, 32, 5_000, 0.1, 0, 0)));
        assertThat(p.decision().reason()).isEqualTo(DecisionReason.SWITCH);
        assertThat(p.decision().alternativeExecuted()).isFalse();
        assertThat(FixedPolicyTest.routes(p)).isEqualTo("peer-dram@b/1[0,4)");
        assertThat(p.decision().executed()).isEqualTo(p.decision().fixed());
    }

    @Test
    @DisplayName("ROUTE-6 31 successes of the fixed plan's class: unsampled, fixed plan, no search")
    void unsampledFixed() {
        Plan p = scenario(SelectionMode.COST_DRIVEN, costs(est(PEER_B, 31, 50_000, 100, 0, 0), est(LOCAL, 32, 5_000, 0.1, 0, 0)));
        assertThat(p.decision().reason()).isEqualTo(DecisionReason.UNSAMPLED);
        assertThat(p.decision().alternativesEvaluated()).isZero();
        assertThat(FixedPolicyTest.routes(p)).isEqualTo("peer-dram@b/1[0,4)");
        assertThat(scenario(SelectionMode.COST_DRIVEN, c -> null).decision().reason()).isEqualTo(DecisionReason.UNSAMPLED);
    }

    @Test
    @DisplayName("ROUTE-6 31 successes of the alternative's class: it takes no part, the fixed plan is the best")
    void unsampledAlternative() {
        Plan p = scenario(SelectionMode.COST_DRIVEN, costs(est(PEER_B, 32, 50_000, 100, 0, 0), est(LOCAL, 31, 5_000, 0.1, 0, 0)));
        assertThat(p.decision().reason()).isEqualTo(DecisionReason.FIXED_IS_BEST);
        assertThat(FixedPolicyTest.routes(p)).isEqualTo("peer-dram@b/1[0,4)");
    }

    @Test
    @DisplayName("ROUTE-6 a gain within uncertainty plus hysteresis keeps the fixed plan")
    void withinMargin() {
        // margin = 700,000 (F) + 710,000 (A) + 168,840 = 1,578,840 > gain 1,222,571.2
        Plan p = scenario(SelectionMode.COST_DRIVEN,
                costs(est(PEER_B, 32, 50_000, 100, 700_000, 0), est(LOCAL, 32, 5_000, 0.1, 10_000, 0)));
        assertThat(p.decision().reason()).isEqualTo(DecisionReason.WITHIN_MARGIN);
        assertThat(FixedPolicyTest.routes(p)).isEqualTo("peer-dram@b/1[0,4)");
        // and the switch rule alone, at the edge: gain must be strictly larger than the margin
        Planner planner = new Planner(RoutePolicy.defaults().withHysteresis(0, 0));
        assertThat(planner.switchHolds(new Prediction(100, 10, 1), new Prediction(80, 10, 1))).isFalse(); // gain 20 = 20
        assertThat(planner.switchHolds(new Prediction(100, 10, 1), new Prediction(79, 10, 1))).isTrue();
        assertThat(planner.switchHolds(new Prediction(100, 10, 1), new Prediction(50, 10, 0.5))).isFalse(); // riskier
    }

    @Test
    @DisplayName("ROUTE-6 failures stay in the evidence: a fast but failing class is not chosen")
    void failuresRaiseRisk() {
        // local: 32 successes and 288 failures -> success rate 0.1; A's risk-adjusted time 4,658,288 > F's 1,688,400
        Plan p = scenario(SelectionMode.COST_DRIVEN, costs(est(PEER_B, 32, 50_000, 100, 0, 0), est(LOCAL, 32, 5_000, 0.1, 0, 288)));
        assertThat(p.decision().reason()).isEqualTo(DecisionReason.FIXED_IS_BEST);
        assertThat(FixedPolicyTest.routes(p)).isEqualTo("peer-dram@b/1[0,4)");
    }

    @Test
    @DisplayName("ROUTE-4 exhausting the batch budget falls back to the fixed plan and says so")
    void exhausted() {
        Ev ev = Ev.keys(4).local(0, 3, DRAM).peer("b", 0, 4, DRAM);
        Planner tight = new Planner(RoutePolicy.defaults().withSelectionMode(SelectionMode.COST_DRIVEN).withSearch(1, 2));
        Plan p = tight.plan(ev.demand(0), ev.build(), 0, 0, new Exclusions(),
                costs(est(PEER_B, 32, 50_000, 100, 0, 0), est(LOCAL, 32, 5_000, 0.1, 0, 0)));
        assertThat(p.decision().reason()).isEqualTo(DecisionReason.SEARCH_EXHAUSTED);
        assertThat(p.decision().alternativesEvaluated()).isEqualTo(2);
        assertThat(FixedPolicyTest.routes(p)).isEqualTo("peer-dram@b/1[0,4)");
    }

    @Test
    @DisplayName("ROUTE-4 at most the per-boundary bound of partial alternatives survives each boundary")
    void perBoundaryBound() {
        Ev ev = Ev.keys(6).local(0, 6, DRAM);
        for (String n : new String[] {"a", "b", "c", "d", "e", "f"}) {
            ev.peer(n, 0, 2, DRAM).peer(n, 2, 4, SSD).peer(n, 4, 6, DRAM);
        }
        Function<RouteClass, CostEstimate> all = c -> est(c, 40, 1000 + c.toString().hashCode() % 500, 0.5, 0, 0);
        Plan two = new Planner(RoutePolicy.defaults().withSelectionMode(SelectionMode.COST_DRIVEN).withSearch(2, 4096))
                .plan(ev.demand(0), ev.build(), 0, 0, new Exclusions(), all);
        Plan eight = new Planner(RoutePolicy.defaults().withSelectionMode(SelectionMode.COST_DRIVEN).withSearch(8, 4096))
                .plan(ev.demand(0), ev.build(), 0, 0, new Exclusions(), all);
        // 3 blocks; block 1 from the root: 7 sources (local + 6 peer DRAM); blocks 2, 3: at most k kept x 7
        assertThat(two.decision().alternativesEvaluated()).isLessThanOrEqualTo(7 + 2 * 2 * 7);
        assertThat(eight.decision().alternativesEvaluated()).isLessThanOrEqualTo(7 + 2 * 8 * 7)
                .isGreaterThan(two.decision().alternativesEvaluated());
        assertThat(two.decision().alternativesPruned()).isPositive();
    }

    @Test
    @DisplayName("ROUTE-4 splits lie only where some source's availability changes (seeded; -Dorbitkv.seed=N)")
    void splitsOnlyAtChanges() {
        long seed = Long.getLong("orbitkv.seed", System.nanoTime());
        System.out.println("PlannerDecisionTest.splitsOnlyAtChanges seed=" + seed + " (replay: -Dorbitkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        Planner planner = new Planner(RoutePolicy.defaults().withSelectionMode(SelectionMode.COST_DRIVEN).withObservationsMin(1));
        int switched = 0;
        for (int round = 0; round < 400; round++) {
            Evidence e = FixedPolicyTest.randomEvidence(rnd);
            var demand = Ev.keys(e.keys().size()).demand(0).withStaleHintsAllowed(true);
            Plan p = planner.plan(demand, e, 0, 0, new Exclusions(), randomCosts(rnd));
            if (p.decision().alternativeExecuted()) {
                switched++;
            }
            for (int i = 1; i < p.routes().size(); i++) {
                int at = p.routes().get(i).fromIndex();
                assertThat(sources(e.keys().get(at))).as("seed %d round %d split at %d", seed, round, at)
                        .isNotEqualTo(sources(e.keys().get(at - 1)));
            }
            for (Route r : p.routes()) { // every block really is held by the route's source
                for (int i = r.fromIndex(); i < r.toIndex(); i++) {
                    assertThat(sources(e.keys().get(i))).contains(r.source());
                }
            }
            assertThat(p.decision().alternativesEvaluated()).isLessThanOrEqualTo(RoutePolicy.ALTERNATIVES_PER_BATCH_MAX_DEFAULT);
        }
        assertThat(switched).as("random costs must exercise switches too").isPositive();
    }

    /** The eligible sources of one key, computed from the evidence directly (stale allowed, all kinds). */
    static Set<RouteSource> sources(KeyEvidence k) {
        Set<RouteSource> s = new HashSet<>();
        for (LocalResidence l : k.local()) {
            s.add(new RouteSource.Local(l.medium()));
        }
        for (Replica r : k.remote()) {
            s.add(new RouteSource.Peer(r.owner(), r.medium()));
        }
        return s;
    }

    /** Per-class random but fixed estimates (a pure function of the class and one draw). */
    static Function<RouteClass, CostEstimate> randomCosts(Random rnd) {
        long base = rnd.nextLong();
        return c -> {
            Random r = new Random(base ^ c.toString().hashCode());
            if (r.nextInt(10) == 0) {
                return null;
            }
            return est(c, 1 + r.nextInt(64), r.nextInt(200_000), r.nextDouble() * 50, r.nextInt(20_000), r.nextInt(3) == 0 ? r.nextInt(5) : 0);
        };
    }

    @Test
    @DisplayName("ROUTE-3 bytes are a tie-breaker, never added to seconds: equal predictions rank by fewer routes, then bytes")
    void bytesOnlyBreakTies() {
        // Two peers with identical estimates hold everything; the plan with one route wins, never a split.
        Ev ev = Ev.keys(3).peer("b", 0, 3, DRAM).peer("c", 0, 3, DRAM);
        Function<RouteClass, CostEstimate> same = c -> est(c, 40, 10_000, 1, 0, 0);
        Plan p = new Planner(RoutePolicy.defaults().withSelectionMode(SelectionMode.COST_DRIVEN)).plan(ev.demand(0), ev.build(), 0, 0,
                new Exclusions(), same);
        assertThat(p.decision().reason()).isEqualTo(DecisionReason.FIXED_IS_BEST);
        assertThat(p.routes()).hasSize(1);
        assertThat(Optional.of(p.decision().fixed().orElseThrow().meanNanos())).contains(10_000 + 3 * 4096.0);
    }
}
