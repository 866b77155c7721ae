package orbitkv.recovery.plan;

import static orbitkv.inventory.Medium.DRAM;
import static orbitkv.recovery.plan.PlannerDecisionTest.costs;
import static orbitkv.recovery.plan.PlannerDecisionTest.est;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import orbitkv.recovery.AdmissionStatus;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.DecisionReason;
import orbitkv.recovery.LaneHeadroom;
import orbitkv.recovery.NicLane;
import orbitkv.recovery.Plan;
import orbitkv.recovery.RouteClass;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.SelectionMode;
import orbitkv.recovery.fixtures.Ev;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The network constraint in the demand and the cost model (ROUTE-3, ROUTE-11; issue 39 item 6). Scenario N: 4 keys of
 * 4096 B; local DRAM holds keys 0-2, peer b DRAM holds 0-3. Estimates: peer b 10 us + 1 ns/B, local DRAM 100 us +
 * 10 ns/B, no error, no failure. F = b[0,4): 10,000 + 16,384 = 26,384 ns; A = L[0,3) + b[3,4): 100,000 + 122,880 +
 * 10,000 + 4,096 = 236,976 ns. Unconstrained, F is the best alternative. A peer route takes its
 * {@code routeReadsInFlight} largest blocks from the rx lane: with 4 that is 16,384 B for F and 4,096 B for A's peer
 * route.
 */
@Tag("unit")
class LaneHeadroomTest {
    static final NicLane LO_RX = new NicLane("lo", NicLane.Direction.RX);
    static final RouteClass PEER_B = PlannerDecisionTest.PEER_B;
    static final RouteClass LOCAL = PlannerDecisionTest.LOCAL;

    private static Function<RouteClass, CostEstimate> scenarioCosts() {
        return costs(est(PEER_B, 32, 10_000, 1, 0, 0), est(LOCAL, 32, 100_000, 10, 0, 0));
    }

    private static Plan plan(SelectionMode mode, Optional<LaneHeadroom> lane) {
        Ev ev = Ev.keys(4).local(0, 3, DRAM).peer("b", 0, 4, DRAM);
        var demand = lane.map(ev.demand(0)::withNetwork).orElse(ev.demand(0));
        return new Planner(RoutePolicy.defaults().withSelectionMode(mode)).plan(demand, ev.build(), 0, 0,
                new Exclusions(), scenarioCosts());
    }

    @Test
    @DisplayName("ROUTE-3 without a network constraint the fast peer route is the best: fixed-is-best")
    void unconstrained() {
        Plan p = plan(SelectionMode.COST_DRIVEN, Optional.empty());
        assertThat(p.decision().reason()).isEqualTo(DecisionReason.FIXED_IS_BEST);
        assertThat(p.decision().fixed().orElseThrow().successProbability()).isEqualTo(1.0);
    }

    @Test
    @DisplayName("ROUTE-3 ROUTE-11 a peer route beyond its lane's admission headroom is predicted refused (success 0), not as if it had room; an alternative that fits is a switch")
    void blockedFixedPlanSwitches() {
        Plan p = plan(SelectionMode.COST_DRIVEN, Optional.of(new LaneHeadroom(LO_RX, 8_192, 4)));
        assertThat(p.decision().fixed().orElseThrow().successProbability()).as("F needs 16,384 B of 8,192").isZero();
        assertThat(p.decision().fixed().orElseThrow().meanNanos()).as("bytes never become seconds").isEqualTo(26_384.0);
        assertThat(p.decision().reason()).isEqualTo(DecisionReason.SWITCH);
        assertThat(p.decision().alternativeExecuted()).isTrue();
        assertThat(FixedPolicyTest.routes(p)).isEqualTo("local-dram[0,3) peer-dram@b/1[3,4)");
        assertThat(p.decision().alternative().orElseThrow().successProbability()).isEqualTo(1.0);
        assertThat(p.decision().alternative().orElseThrow().meanNanos()).isEqualTo(236_976.0);
    }

    @Test
    @DisplayName("ROUTE-3 SHADOW records the lane switch and still executes the fixed plan")
    void shadowKeepsTheFixedPlan() {
        Plan p = plan(SelectionMode.SHADOW, Optional.of(new LaneHeadroom(LO_RX, 8_192, 4)));
        assertThat(p.decision().reason()).isEqualTo(DecisionReason.SWITCH);
        assertThat(FixedPolicyTest.routes(p)).isEqualTo("peer-dram@b/1[0,4)");
    }

    @Test
    @DisplayName("ROUTE-3 the lane need is the route's READs in flight (its k largest blocks), not its whole bytes")
    void needIsTheReadsInFlight() {
        Plan fits = plan(SelectionMode.COST_DRIVEN, Optional.of(new LaneHeadroom(LO_RX, 8_192, 2)));
        assertThat(fits.decision().reason()).as("2 x 4,096 fit 8,192").isEqualTo(DecisionReason.FIXED_IS_BEST);
        assertThat(fits.decision().fixed().orElseThrow().successProbability()).isEqualTo(1.0);
        Plan exact = plan(SelectionMode.COST_DRIVEN, Optional.of(new LaneHeadroom(LO_RX, 16_384, 4)));
        assertThat(exact.decision().reason()).as("16,384 fit 16,384").isEqualTo(DecisionReason.FIXED_IS_BEST);
    }

    @Test
    @DisplayName("ROUTE-3 a lane with no headroom at all: every plan with a peer route is predicted refused, none is preferred by a switch")
    void noHeadroomNoSwitch() {
        Plan p = plan(SelectionMode.COST_DRIVEN, Optional.of(new LaneHeadroom(LO_RX, 0, 4)));
        assertThat(p.decision().fixed().orElseThrow().successProbability()).isZero();
        assertThat(p.decision().reason()).isNotEqualTo(DecisionReason.SWITCH);
        assertThat(FixedPolicyTest.routes(p)).isEqualTo("peer-dram@b/1[0,4)");
    }

    @Test
    @DisplayName("ROUTE-3 local routes use no NIC: a full lane does not touch an all-local plan")
    void localRoutesIgnoreTheLane() {
        Ev ev = Ev.keys(3).local(0, 3, DRAM);
        Plan p = new Planner(RoutePolicy.defaults().withSelectionMode(SelectionMode.COST_DRIVEN)).plan(
                ev.demand(0).withNetwork(new LaneHeadroom(LO_RX, 0, 4)), ev.build(), 0, 0, new Exclusions(),
                scenarioCosts());
        assertThat(p.decision().fixed().orElseThrow().successProbability()).isEqualTo(1.0);
        assertThat(p.prefixKeys()).isEqualTo(3);
    }

    @Test
    @DisplayName("ROUTE-11 the headroom is the lane's usable window minus every submitter's charge; bad input is refused")
    void fromStatus() {
        AdmissionStatus s = new AdmissionStatus(List.of(new AdmissionStatus.LaneStatus(LO_RX, 1_000, 900, 700, 0, 700,
                0, 0, 700)), Map.of(), Map.of(), 1, 0, 1, 0, 0);
        assertThat(LaneHeadroom.of(s, LO_RX, 4)).contains(new LaneHeadroom(LO_RX, 200, 4));
        assertThat(LaneHeadroom.of(s, new NicLane("lo", NicLane.Direction.TX), 4)).isEmpty();
        assertThatThrownBy(() -> new LaneHeadroom(LO_RX, -1, 4)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LaneHeadroom(LO_RX, 1, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
