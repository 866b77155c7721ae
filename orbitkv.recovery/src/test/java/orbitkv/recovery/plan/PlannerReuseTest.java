package orbitkv.recovery.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import orbitkv.index.Coverage;
import orbitkv.index.Replica;
import orbitkv.inventory.Medium;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.Demand;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.KeyEvidence;
import orbitkv.recovery.LocalResidence;
import orbitkv.recovery.Plan;
import orbitkv.recovery.Route;
import orbitkv.recovery.RouteClass;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.SelectionMode;
import orbitkv.recovery.fixtures.Ev;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 24 item 6: the planner's reused scratch changes no answer. A planner that has already decided other demands
 * (its pooled scratch holding rows, sources and partials of earlier evidence) must answer exactly like a planner
 * that never decided anything, sequentially and with many threads sharing it; the pool keeps its bound. Seeded
 * (printed; replay with {@code -Dorbitkv.seed=N}); demands of 1..128 keys over up to 40 peer nodes, so windows
 * with more sources than {@link EligibleWindow#ROWS_RETAINED_MAX} (growth and trimming) occur, plus request-local
 * exclusions, capacity cuts and replans from a later index.
 */
@Tag("unit")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class PlannerReuseTest {
    private static final SelectionMode[] MODES = SelectionMode.values();

    /** One planning call and the answer of a planner that never planned before. */
    record Case(int mode, Demand demand, Evidence evidence, int from, long bytesBefore, Exclusions exclusions,
            Function<RouteClass, CostEstimate> costs, Plan expected) {}

    private static RoutePolicy policy(int mode) {
        return RoutePolicy.defaults().withSelectionMode(MODES[mode]).withObservationsMin(1);
    }

    private static long seed(String test) {
        long seed = Long.getLong("orbitkv.seed", System.nanoTime());
        System.out.println("PlannerReuseTest." + test + " seed=" + seed + " (replay: -Dorbitkv.seed=" + seed + ")");
        return seed;
    }

    static Evidence wideEvidence(Random rnd, int n, int nodes) {
        List<KeyEvidence> keys = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            List<LocalResidence> local = new ArrayList<>();
            for (Medium m : Medium.values()) {
                if (rnd.nextInt(3) == 0) {
                    local.add(new LocalResidence(m, 100 + i, 1000 + rnd.nextInt(3) * 1000));
                }
            }
            List<Replica> remote = new ArrayList<>();
            int replicas = rnd.nextInt(KeyEvidence.REMOTE_REPLICAS_MAX + 1);
            for (int j = 0; j < replicas; j++) {
                String node = "n" + rnd.nextInt(nodes);
                Incarnation inc = rnd.nextInt(8) == 0 ? new Incarnation(new NodeId(node), new NodeEpoch(2), Ev.inc(node + "x").id())
                        : Ev.inc(node);
                Medium m = rnd.nextBoolean() ? Medium.DRAM : Medium.SSD;
                remote.add(new Replica(inc, m, 100 + i + rnd.nextInt(2), 1000 + rnd.nextInt(3) * 1000, rnd.nextInt(6) == 0));
            }
            keys.add(new KeyEvidence(Ev.key(i), local, remote, false));
        }
        Coverage coverage = Coverage.values()[rnd.nextInt(Coverage.values().length)];
        return new Evidence(coverage, 3, Evidence.allKinds(), keys);
    }

    static Case randomCase(Random rnd) {
        int n = 1 + rnd.nextInt(Demand.KEYS_MAX);
        Evidence e = wideEvidence(rnd, n, 1 + rnd.nextInt(40));
        Demand d = Ev.keys(n).demand(0).withStaleHintsAllowed(rnd.nextBoolean());
        if (rnd.nextInt(4) == 0) {
            d = d.withDestinationBytesMax(rnd.nextInt(64 * 2000));
        }
        int mode = rnd.nextInt(MODES.length);
        Function<RouteClass, CostEstimate> costs = PlannerDecisionTest.randomCosts(rnd);
        Exclusions x = new Exclusions();
        if (rnd.nextInt(3) == 0) { // refuse a route of a first plan, as a replan would
            Plan first = new Planner(policy(mode)).plan(d, e, 0, 0, new Exclusions(), costs);
            if (!first.routes().isEmpty()) {
                Route r = first.routes().get(rnd.nextInt(first.routes().size()));
                if (rnd.nextBoolean()) {
                    x.add(r, AdmissionRefusal.PINS_EXHAUSTED, List.of());
                } else {
                    x.add(r, AdmissionRefusal.NOT_RESIDENT, List.of(r.blocks().get(rnd.nextInt(r.blocks().size())).key()));
                }
            }
        }
        int from = rnd.nextInt(4) == 0 ? rnd.nextInt(n) : 0;
        long before = from == 0 ? 0 : rnd.nextInt(4000);
        Plan expected = new Planner(policy(mode)).plan(d, e, from, before, x, costs);
        return new Case(mode, d, e, from, before, x, costs, expected);
    }

    private static Planner[] planners() {
        Planner[] p = new Planner[MODES.length];
        for (int m = 0; m < MODES.length; m++) {
            p[m] = new Planner(policy(m));
        }
        return p;
    }

    @Test
    @DisplayName("ROUTE-1..ROUTE-7 a planner with a used scratch answers exactly like a new one (seeded)")
    void reusedScratchAnswersLikeANewOne() {
        long seed = seed("reusedScratchAnswersLikeANewOne");
        Random rnd = new Random(seed);
        Planner[] shared = planners();
        int wide = 0;
        for (int round = 0; round < 600; round++) {
            Case c = randomCase(rnd);
            Plan got = shared[c.mode()].plan(c.demand(), c.evidence(), c.from(), c.bytesBefore(), c.exclusions(), c.costs());
            assertThat(got).as("seed %d round %d", seed, round).isEqualTo(c.expected());
            if (c.expected().eligibleSources() > EligibleWindow.ROWS_RETAINED_MAX) {
                wide++;
            }
        }
        assertThat(wide).as("windows wider than the retained rows must occur").isPositive();
        for (Planner p : shared) {
            assertThat(p.scratches().made()).as("one thread: one scratch per planner").isEqualTo(1);
        }
    }

    @Test
    @DisplayName("ROUTE-1..ROUTE-7 20 threads sharing one planner per mode get the answers of new planners (seeded)")
    void sharedPlannerConfinesItsScratch() throws Exception {
        long seed = seed("sharedPlannerConfinesItsScratch");
        Random rnd = new Random(seed);
        List<Case> cases = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            cases.add(randomCase(rnd));
        }
        Planner[] shared = planners();
        int threads = 20;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Integer>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int offset = t;
                done.add(pool.submit(() -> {
                    start.await(30, TimeUnit.SECONDS);
                    int checked = 0;
                    for (int pass = 0; pass < 3; pass++) {
                        for (int i = 0; i < cases.size(); i++) {
                            Case c = cases.get((i + offset * 7) % cases.size());
                            Plan got = shared[c.mode()].plan(c.demand(), c.evidence(), c.from(), c.bytesBefore(), c.exclusions(), c.costs());
                            assertThat(got).as("seed %d thread %d case %d", seed, offset, i).isEqualTo(c.expected());
                            checked++;
                        }
                    }
                    return checked;
                }));
            }
            for (Future<Integer> f : done) {
                assertThat(f.get(150, TimeUnit.SECONDS)).isEqualTo(3 * cases.size());
            }
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    @DisplayName("the scratch pool: one owner per borrowed scratch, at most its slots kept, overflow made and dropped, counted")
    void poolKeepsItsBound() {
        ScratchPool pool = new ScratchPool(2, () -> new PlanScratch(RoutePolicy.defaults()));
        PlanScratch a = pool.borrow();
        PlanScratch b = pool.borrow();
        PlanScratch c = pool.borrow();
        assertThat(List.of(a, b, c)).doesNotHaveDuplicates();
        assertThat(pool.made()).isEqualTo(3);
        pool.release(a);
        pool.release(b);
        pool.release(c);
        assertThat(pool.dropped()).as("two slots: the third scratch is dropped").isEqualTo(1);
        PlanScratch again = pool.borrow();
        PlanScratch again2 = pool.borrow();
        assertThat(List.of(again, again2)).containsExactlyInAnyOrder(a, b);
        assertThat(pool.made()).isEqualTo(3);
    }
}
