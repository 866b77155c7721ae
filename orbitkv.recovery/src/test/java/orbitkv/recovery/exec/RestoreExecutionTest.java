package orbitkv.recovery.exec;

import static orbitkv.inventory.Medium.DRAM;
import static orbitkv.inventory.Medium.SSD;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import orbitkv.membership.NodeId;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.PrefixStop;
import orbitkv.recovery.Restore;
import orbitkv.recovery.RouteClass;
import orbitkv.recovery.RouteKind;
import orbitkv.recovery.RouteOutcome;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.RouteSelection;
import orbitkv.recovery.SelectionMode;
import orbitkv.recovery.TraceSampling;
import orbitkv.recovery.TracedRoute;
import orbitkv.recovery.TransferPorts;
import orbitkv.recovery.fixtures.Ev;
import orbitkv.recovery.fixtures.FakePorts;
import orbitkv.recovery.fixtures.FakePorts.Step;
import orbitkv.recovery.fixtures.ManualClock;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Execution against scripted ports (ROUTE-7, ROUTE-8, ROUTE-10, ROUTE-11). */
@Tag("unit")
@Timeout(30)
class RestoreExecutionTest {
    private final ManualClock clock = new ManualClock();
    private final FakePorts ports = new FakePorts(clock);

    private RouteSelection selection(RoutePolicy policy) {
        return RouteSelection.create(policy, TraceSampling.off(), clock);
    }

    @org.junit.jupiter.api.AfterEach
    void noViolations() {
        assertThat(ports.violations).as("port contract violations").isEmpty();
    }

    private long in(long nanos) {
        return clock.getAsLong() + nanos;
    }

    @Test
    @DisplayName("ROUTE-8 ROUTE-10 routes run in demand order with one READ in flight and one next authorization")
    void orderAndOverlapBound() {
        try (RouteSelection s = selection(RoutePolicy.defaults())) {
            Ev ev = Ev.keys(6).local(0, 2, DRAM).peer("b", 2, 4, DRAM).peer("c", 4, 6, SSD);
            Restore<FakePorts.Dest> r = s.restore(ev.demand(in(1_000_000_000)), ev.build(), ports);
            assertThat(r.restoredKeys()).isEqualTo(6);
            assertThat(r.stop()).isEqualTo(PrefixStop.COMPLETE);
            assertThat(r.delivered()).extracting(d -> d.route().fromIndex()).containsExactly(0, 2, 4);
            assertThat(r.delivered()).allSatisfy(d -> assertThat(d.destination().route()).isEqualTo(d.route()));
            assertThat(ports.events("read")).containsExactly("local-dram[0,2)", "peer-dram@b/1[2,4)", "peer-ssd@c/1[4,6)");
            assertThat(ports.maxInFlight.get()).isEqualTo(1);
            assertThat(ports.maxAdmitted.get()).isEqualTo(1);
            // the next route is authorized while the previous READ is submitted (overlap), never two ahead
            assertThat(ports.events).containsSubsequence("read local-dram[0,2)", "grant peer-dram@b/1[2,4)",
                    "read peer-dram@b/1[2,4)", "grant peer-ssd@c/1[4,6)");
            assertThat(ports.grantsHeld.get()).isZero();
            assertThat(ports.creditsHeld.get()).isZero();
            assertThat(s.metrics().drainPending()).isZero();
            assertThat(s.costs()).extracting(CostEstimate::routeClass).containsExactly(RouteClass.local(RouteKind.LOCAL_DRAM),
                    RouteClass.peer(RouteKind.PEER_DRAM, new NodeId("b")), RouteClass.peer(RouteKind.PEER_SSD, new NodeId("c")));
        }
    }

    @Test
    @DisplayName("ROUTE-7 a stale-generation refusal replans on request-local evidence; the next request tries again")
    void staleGenerationReplans() {
        try (RouteSelection s = selection(RoutePolicy.defaults())) {
            Ev ev = Ev.keys(3).peer("b", 0, 3, DRAM).peer("c", 0, 3, SSD);
            ports.then("peer-dram@b/1", new Step.RefuseGrant(AdmissionRefusal.STALE_GENERATION, List.of(Ev.key(1))));
            Restore<FakePorts.Dest> r = s.restore(ev.demand(in(1_000_000_000)), ev.build(), ports);
            assertThat(r.restoredKeys()).isEqualTo(3);
            assertThat(r.trace().replans()).containsExactly(AdmissionRefusal.STALE_GENERATION);
            // key 1 at b is excluded for this request only: b's run from 0 is now 1 key, c's 3: c serves all
            assertThat(ports.events("read")).containsExactly("peer-ssd@c/1[0,3)");
            assertThat(r.trace().routes()).extracting(TracedRoute::outcome).containsExactly(RouteOutcome.REFUSED, RouteOutcome.READY);
            Restore<FakePorts.Dest> again = s.restore(ev.demand(in(1_000_000_000)), ev.build(), ports);
            assertThat(again.trace().replans()).isEmpty();
            assertThat(ports.events("read")).endsWith("peer-dram@b/1[0,3)");
            assertThat(s.metrics().replans().get(AdmissionRefusal.STALE_GENERATION)).isEqualTo(1);
            // a metadata refusal is not path risk: b's class has no refusal observation
            assertThat(s.costs()).filteredOn(e -> e.routeClass().peer().map(n -> n.value().equals("b")).orElse(false))
                    .allSatisfy(e -> assertThat(e.refusals()).isZero());
        }
    }

    @Test
    @DisplayName("ROUTE-7 at most two replans: a third refusal ends the prefix with replans-exhausted")
    void replansBounded() {
        try (RouteSelection s = selection(RoutePolicy.defaults())) {
            Ev ev = Ev.keys(2).peer("a", 0, 2, DRAM).peer("b", 0, 2, DRAM).peer("c", 0, 2, DRAM).peer("d", 0, 2, DRAM);
            for (String n : new String[] {"a", "b", "c"}) {
                ports.then("peer-dram@" + n + "/1", new Step.RefuseGrant(AdmissionRefusal.PINS_EXHAUSTED, List.of()));
            }
            Restore<FakePorts.Dest> r = s.restore(ev.demand(in(1_000_000_000)), ev.build(), ports);
            assertThat(r.restoredKeys()).isZero();
            assertThat(r.stop()).isEqualTo(PrefixStop.REPLANS_EXHAUSTED);
            assertThat(r.trace().replans()).hasSize(2);
            assertThat(ports.events("grant-refused")).hasSize(3);
            assertThat(ports.events("read")).isEmpty();
            assertThat(ports.creditsHeld.get()).isZero();
            // pins exhausted is path risk: kept as a refusal observation
            assertThat(s.costs()).hasSize(3).allSatisfy(e -> assertThat(e.refusals()).isEqualTo(1));
        }
    }

    @Test
    @DisplayName("ROUTE-7 a refusal of the overlapped next route replans from its first key after the READ in flight")
    void refusalOfNextRoute() {
        try (RouteSelection s = selection(RoutePolicy.defaults())) {
            Ev ev = Ev.keys(4).local(0, 2, DRAM).peer("b", 2, 4, DRAM).peer("c", 2, 4, DRAM);
            ports.then("peer-dram@b/1", new Step.RefuseGrant(AdmissionRefusal.EGRESS_CAP, List.of()));
            Restore<FakePorts.Dest> r = s.restore(ev.demand(in(1_000_000_000)), ev.build(), ports);
            assertThat(r.restoredKeys()).isEqualTo(4);
            assertThat(ports.events("read")).containsExactly("local-dram[0,2)", "peer-dram@c/1[2,4)");
            assertThat(r.trace().replans()).containsExactly(AdmissionRefusal.EGRESS_CAP);
        }
    }

    @Test
    @DisplayName("ROUTE-7 ROUTE-11 refused receive credits release nothing twice and the replan may retry the route")
    void creditRefusal() {
        try (RouteSelection s = selection(RoutePolicy.defaults())) {
            Ev ev = Ev.keys(2).peer("b", 0, 2, DRAM);
            ports.then("peer-dram@b/1", new Step.RefuseCredits());
            Restore<FakePorts.Dest> r = s.restore(ev.demand(in(1_000_000_000)), ev.build(), ports);
            assertThat(r.restoredKeys()).isEqualTo(2);
            assertThat(r.trace().replans()).containsExactly(AdmissionRefusal.RECEIVE_CREDITS);
            assertThat(ports.events("grant")).containsExactly("peer-dram@b/1[0,2)");
        }
    }

    @Test
    @DisplayName("ROUTE-3 a READ seen ready before its readiness callback ran is timed to when it was seen, never from the unset stamp")
    void readyBeforeItsCallbackIsTimed() {
        try (RouteSelection s = selection(RoutePolicy.defaults())) {
            Ev ev = Ev.keys(2).peer("b", 0, 2, DRAM);
            ports.then("peer-dram@b/1", new Step.ReadyCallbacksLate(40_000));
            Restore<FakePorts.Dest> r = s.restore(ev.demand(in(1_000_000_000)), ev.build(), ports);
            assertThat(r.stop()).isEqualTo(PrefixStop.COMPLETE);
            // Issue 25: the observation was Long.MIN_VALUE - start, an overflow to ~9.2e18 ns, and one such READ in a
            // class of 33 made its predicted mean ~2.8e17 ns (SlowPeerSwitchGateTest never switched under load).
            assertThat(s.costs()).singleElement().satisfies(e -> {
                assertThat(e.successes()).isEqualTo(1);
                assertThat(e.fixedNanos()).as("fixed cost fitted to the one 40 us READ").isLessThanOrEqualTo(40_000);
                assertThat(e.nanosPerByte()).as("per-byte cost fitted to the one 40 us READ").isLessThanOrEqualTo(40_000);
            });
        }
    }

    @Test
    @DisplayName("ROUTE-8 a payload failure ends the prefix: no retry on another medium, the next route released unsubmitted")
    void payloadFailure() {
        try (RouteSelection s = selection(RoutePolicy.defaults())) {
            Ev ev = Ev.keys(4).local(0, 2, DRAM).local(0, 4, SSD).peer("b", 2, 4, DRAM);
            // fixed: local-ssd[0,4) is the longest span; make it fail
            ports.then("local-ssd", new Step.Fail(5_000));
            Restore<FakePorts.Dest> r = s.restore(ev.demand(in(1_000_000_000)), ev.build(), ports);
            assertThat(r.restoredKeys()).isZero();
            assertThat(r.stop()).isEqualTo(PrefixStop.PAYLOAD_FAILURE);
            assertThat(ports.events("read")).containsExactly("local-ssd[0,4)");
            assertThat(r.delivered()).isEmpty();
            assertThat(ports.grantsHeld.get()).isZero();
            assertThat(s.costs()).singleElement().satisfies(e -> assertThat(e.failures()).isEqualTo(1));
            assertThat(s.metrics().byKind().get(RouteKind.LOCAL_SSD).payloadFailures()).isEqualTo(1);
        }
    }

    @Test
    @DisplayName("ROUTE-8 ROUTE-11 a READ in flight at the deadline keeps its grant and credits until drain; nothing races in")
    void timeoutKeepsResourcesUntilDrain() {
        try (RouteSelection s = RouteSelection.create(RoutePolicy.defaults(), TraceSampling.off(), System::nanoTime)) {
            FakePorts p = new FakePorts(new ManualClock());
            Ev ev = Ev.keys(4).peer("b", 0, 2, DRAM).peer("c", 0, 4, SSD);
            p.then("peer-ssd@c/1", new Step.Hang());
            long t0 = System.nanoTime();
            Restore<FakePorts.Dest> r = s.restore(ev.demand(System.nanoTime() + Duration.ofMillis(100).toNanos()), ev.build(), p);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
            assertThat(r.stop()).isEqualTo(PrefixStop.DEADLINE);
            assertThat(r.restoredKeys()).isZero();
            assertThat(r.trace().drainPending()).isEqualTo(1);
            assertThat(p.grantsHeld.get()).isEqualTo(1);
            assertThat(p.creditsHeld.get()).isEqualTo(1);
            assertThat(p.events("read")).containsExactly("peer-ssd@c/1[0,4)"); // no second route into those keys
            assertThat(s.metrics().drainPending()).isEqualTo(1);
            p.drainHung();
            assertThat(p.violations).isEmpty();
            assertThat(p.grantsHeld.get()).isZero();
            assertThat(p.creditsHeld.get()).isZero();
            assertThat(s.metrics().drainPending()).isZero();
            assertThat(s.costs()).singleElement().satisfies(e -> assertThat(e.timeouts()).isEqualTo(1));
        }
    }

    @Test
    @DisplayName("ROUTE-8 an interrupted wait is cancelled, not drained: resources stay held")
    void interruptIsNotDrain() {
        try (RouteSelection s = RouteSelection.create(RoutePolicy.defaults(), TraceSampling.off(), System::nanoTime)) {
            FakePorts p = new FakePorts(new ManualClock());
            Ev ev = Ev.keys(1).peer("b", 0, 1, DRAM);
            p.then("peer-dram@b/1", new Step.Hang());
            Thread.currentThread().interrupt();
            Restore<FakePorts.Dest> r = s.restore(ev.demand(System.nanoTime() + Duration.ofSeconds(20).toNanos()), ev.build(), p);
            assertThat(Thread.interrupted()).isTrue();
            assertThat(r.stop()).isEqualTo(PrefixStop.CANCELLED);
            assertThat(p.grantsHeld.get()).isEqualTo(1);
            p.drainHung();
            assertThat(p.violations).isEmpty();
            assertThat(p.grantsHeld.get()).isZero();
        }
    }

    @Test
    @DisplayName("ROUTE-7 nothing is admitted after the deadline")
    void deadlinePassed() {
        try (RouteSelection s = selection(RoutePolicy.defaults())) {
            Ev ev = Ev.keys(2).local(0, 2, DRAM);
            Restore<FakePorts.Dest> r = s.restore(ev.demand(clock.getAsLong() - 1), ev.build(), ports);
            assertThat(r.stop()).isEqualTo(PrefixStop.DEADLINE);
            assertThat(ports.events).isEmpty();
            assertThat(r.trace().deadlineBudgetNanos()).isNegative();
        }
    }

    @Test
    @DisplayName("ROUTE-11 a port that throws on READ: failed, never ready; its resources stay charged (unknown state)")
    void brokenPort() {
        try (RouteSelection s = selection(RoutePolicy.defaults())) {
            Ev ev = Ev.keys(1).peer("b", 0, 1, DRAM);
            ports.then("peer-dram@b/1", new Step.Throw());
            Restore<FakePorts.Dest> r = s.restore(ev.demand(in(1_000_000_000)), ev.build(), ports);
            assertThat(r.stop()).isEqualTo(PrefixStop.PAYLOAD_FAILURE);
            assertThat(ports.grantsHeld.get()).isEqualTo(1);
            assertThat(s.metrics().drainPending()).isEqualTo(1);
        }
    }

    @Test
    @DisplayName("ROUTE-7 ROUTE-11 an authorization that throws is an unreachable source: credits released, replanned")
    void authorizeThrows() {
        try (RouteSelection s = selection(RoutePolicy.defaults())) {
            Ev ev = Ev.keys(2).peer("b", 0, 2, DRAM).peer("c", 0, 2, SSD);
            TransferPorts<FakePorts.Dest> throwing = new TransferPorts<>() {
                @Override
                public CreditOutcome<FakePorts.Dest> credits(orbitkv.recovery.Route route) {
                    return ports.credits(route);
                }

                @Override
                public GrantOutcome<FakePorts.Dest> authorize(orbitkv.recovery.Route route, long deadlineNanos) {
                    if (route.kind() == RouteKind.PEER_DRAM) {
                        throw new IllegalStateException("broken port");
                    }
                    return ports.authorize(route, deadlineNanos);
                }
            };
            Restore<FakePorts.Dest> r = s.restore(ev.demand(in(1_000_000_000)), ev.build(), throwing);
            assertThat(r.restoredKeys()).isEqualTo(2);
            assertThat(r.trace().replans()).containsExactly(AdmissionRefusal.UNREACHABLE);
            assertThat(ports.creditsHeld.get()).isZero();
            assertThat(ports.events("read")).containsExactly("peer-ssd@c/1[0,2)");
        }
    }

    @Test
    @DisplayName("ROUTE-6 a slow peer stops being chosen once 32 observations show the gain, and not at 31 (COST_DRIVEN)")
    void slowPeerSwitch() {
        RoutePolicy policy = RoutePolicy.defaults().withSelectionMode(SelectionMode.COST_DRIVEN);
        try (RouteSelection s = selection(policy)) {
            // a (fixed choice by owner order) is slow, b fast; both seen only through demands only they can serve
            ports.timing("peer-dram@a/1", 2_000_000, 10).timing("peer-dram@b/1", 100_000, 0.5);
            Ev both = Ev.keys(2).peer("a", 0, 2, DRAM).peer("b", 0, 2, DRAM);
            Ev onlyA = Ev.keys(2).peer("a", 0, 2, DRAM);
            Ev onlyB = Ev.keys(2).peer("b", 0, 2, DRAM);
            for (int i = 0; i < 31; i++) {
                s.restore(onlyA.demand(in(1_000_000_000)), onlyA.build(), ports);
                s.restore(onlyB.demand(in(1_000_000_000)), onlyB.build(), ports);
            }
            var before = s.restore(both.demand(in(1_000_000_000)), both.build(), ports); // a's 32nd: still unsampled when planned
            assertThat(before.trace().decision().reason()).isEqualTo(orbitkv.recovery.DecisionReason.UNSAMPLED);
            assertThat(ports.events("read")).last().isEqualTo("peer-dram@a/1[0,2)");
            s.restore(onlyB.demand(in(1_000_000_000)), onlyB.build(), ports); // b's 32nd
            var after = s.restore(both.demand(in(1_000_000_000)), both.build(), ports);
            assertThat(after.trace().decision().reason()).isEqualTo(orbitkv.recovery.DecisionReason.SWITCH);
            assertThat(after.trace().decision().alternativeExecuted()).isTrue();
            assertThat(ports.events("read")).last().isEqualTo("peer-dram@b/1[0,2)");
            assertThat(after.trace().predictionErrorNanos()).isEqualTo(OptionalLong.of(0));
            String header = after.trace().header();
            System.out.println("X-OrbitKV-Route: " + header);
            assertThat(header).startsWith("v1 k=2 r=2 stop=complete plan=2:complete cov=complete sel=cost-driven:switch:executed src=2")
                    .contains(" pred=104us+-0us err=0us age=").endsWith(" t=104us drain=0 routes=peer-dram@b/1[0,2):ready");
        }
    }

    @Test
    @DisplayName("ROUTE-6 a shadow decision never becomes an observation of the unexecuted route")
    void shadowIsNotObservation() {
        try (RouteSelection s = selection(RoutePolicy.defaults().withSelectionMode(SelectionMode.SHADOW))) {
            ports.timing("peer-dram@a/1", 2_000_000, 10).timing("peer-dram@b/1", 100_000, 0.5);
            Ev both = Ev.keys(2).peer("a", 0, 2, DRAM).peer("b", 0, 2, DRAM);
            Ev onlyA = Ev.keys(2).peer("a", 0, 2, DRAM);
            Ev onlyB = Ev.keys(2).peer("b", 0, 2, DRAM);
            for (int i = 0; i < 32; i++) {
                s.restore(onlyA.demand(in(1_000_000_000)), onlyA.build(), ports);
                s.restore(onlyB.demand(in(1_000_000_000)), onlyB.build(), ports);
            }
            for (int i = 0; i < 10; i++) {
                var r = s.restore(both.demand(in(1_000_000_000)), both.build(), ports);
                assertThat(r.trace().decision().reason()).isEqualTo(orbitkv.recovery.DecisionReason.SWITCH);
                assertThat(r.trace().decision().alternativeExecuted()).isFalse();
            }
            CostEstimate b = s.costs().stream().filter(e -> e.routeClass().peer().get().value().equals("b")).findFirst().orElseThrow();
            CostEstimate a = s.costs().stream().filter(e -> e.routeClass().peer().get().value().equals("a")).findFirst().orElseThrow();
            assertThat(b.successes()).isEqualTo(32); // ten shadow "switches" to b added nothing
            assertThat(a.successes()).isEqualTo(42);
        }
    }
}
