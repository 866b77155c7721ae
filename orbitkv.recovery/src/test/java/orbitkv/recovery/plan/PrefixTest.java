package orbitkv.recovery.plan;

import static orbitkv.inventory.Medium.DRAM;
import static orbitkv.inventory.Medium.SSD;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumSet;
import java.util.List;
import orbitkv.index.Coverage;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.CompletionTarget;
import orbitkv.recovery.Demand;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.Plan;
import orbitkv.recovery.PrefixStop;
import orbitkv.recovery.Route;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.RouteKind;
import orbitkv.recovery.fixtures.Ev;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The demand-aware recoverable prefix and why it stops (IDX-14, ROUTE-1, ROUTE-2). */
@Tag("unit")
class PrefixTest {
    private final Planner planner = new Planner(RoutePolicy.defaults());

    private Plan plan(Ev ev) {
        return plan(ev.demand(0), ev.build());
    }

    private Plan plan(Demand d, Evidence e) {
        return planner.plan(d, e, 0, 0, new Exclusions(), c -> null);
    }

    @Test
    @DisplayName("IDX-14 a complete prefix covers every demanded key")
    void complete() {
        Plan p = plan(Ev.keys(4).local(0, 4, DRAM));
        assertThat(p.prefixKeys()).isEqualTo(4);
        assertThat(p.stop()).isEqualTo(PrefixStop.COMPLETE);
    }

    @Test
    @DisplayName("IDX-14 the prefix stops at the first gap even when later keys are held")
    void stopsAtFirstGap() {
        Plan p = plan(Ev.keys(5).local(0, 2, DRAM).local(3, 5, DRAM));
        assertThat(p.prefixKeys()).isEqualTo(2);
        assertThat(p.stop()).isEqualTo(PrefixStop.ABSENT_AT_WATERMARKS);
        assertThat(p.routes()).extracting(Route::toIndex).containsExactly(2);
    }

    @Test
    @DisplayName("IDX-14 IDX-10 the stop reason follows the coverage state when nobody lists the key")
    void stopFollowsCoverage() {
        assertThat(plan(Ev.keys(2).local(0, 1, DRAM).coverage(Coverage.CompleteAtWatermarks)).stop())
                .isEqualTo(PrefixStop.ABSENT_AT_WATERMARKS);
        assertThat(plan(Ev.keys(2).local(0, 1, DRAM).coverage(Coverage.PartialHints)).stop())
                .isEqualTo(PrefixStop.NOT_IN_PARTIAL_HINTS);
        assertThat(plan(Ev.keys(2).local(0, 1, DRAM).coverage(Coverage.Unavailable)).stop())
                .isEqualTo(PrefixStop.METADATA_UNAVAILABLE);
    }

    @Test
    @DisplayName("SNAP-11 ROUTE-1 stale hints are eligible only when the demand allows them")
    void staleHints() {
        Ev ev = Ev.keys(3).local(0, 1, DRAM).stalePeer("b", 1, 3, DRAM);
        Plan strict = plan(ev.demand(0), ev.build());
        assertThat(strict.prefixKeys()).isEqualTo(1);
        assertThat(strict.stop()).isEqualTo(PrefixStop.STALE_HINTS_ONLY);
        Plan lax = plan(ev.demand(0).withStaleHintsAllowed(true), ev.build());
        assertThat(lax.prefixKeys()).isEqualTo(3);
        assertThat(lax.routes().get(1).blocks()).allMatch(b -> b.stale());
    }

    @Test
    @DisplayName("ROUTE-1 a replica on a kind without a qualified path is not eligible (no-qualified-path)")
    void unqualifiedKinds() {
        Plan p = plan(Ev.keys(3).local(0, 1, DRAM).peer("b", 0, 3, DRAM)
                .qualified(EnumSet.of(RouteKind.LOCAL_DRAM, RouteKind.LOCAL_SSD)));
        assertThat(p.prefixKeys()).isEqualTo(1);
        assertThat(p.stop()).isEqualTo(PrefixStop.NO_QUALIFIED_PATH);
        assertThat(p.routes()).extracting(Route::kind).containsExactly(RouteKind.LOCAL_DRAM);
    }

    @Test
    @DisplayName("ROUTE-7 request-local exclusions remove exactly the refused replicas and name the stop")
    void exclusions() {
        Ev ev = Ev.keys(3).peer("b", 0, 3, DRAM);
        Demand d = ev.demand(0);
        Evidence e = ev.build();
        Plan first = plan(d, e);
        Exclusions x = new Exclusions();
        x.add(first.routes().get(0), AdmissionRefusal.STALE_GENERATION, List.of(Ev.key(1)));
        Plan p = planner.plan(d, e, 0, 0, x, c -> null);
        assertThat(p.prefixKeys()).isEqualTo(1);
        assertThat(p.stop()).isEqualTo(PrefixStop.REJECTED_IN_REQUEST);
        // the shared evidence itself is untouched: a fresh request sees the replica again
        assertThat(plan(d, e).prefixKeys()).isEqualTo(3);
    }

    @Test
    @DisplayName("ROUTE-7 a source-scope refusal excludes the source; a credit refusal excludes nothing")
    void refusalScopes() {
        Ev ev = Ev.keys(2).peer("b", 0, 2, DRAM).peer("c", 0, 2, DRAM);
        Plan first = plan(ev);
        assertThat(first.routes().get(0).source().toString()).contains("b");
        Exclusions x = new Exclusions();
        x.add(first.routes().get(0), AdmissionRefusal.PINS_EXHAUSTED, List.of());
        Plan p = planner.plan(ev.demand(0), ev.build(), 0, 0, x, c -> null);
        assertThat(p.routes()).singleElement().satisfies(r -> assertThat(r.source().toString()).contains("c"));
        Exclusions y = new Exclusions();
        y.add(first.routes().get(0), AdmissionRefusal.RECEIVE_CREDITS, List.of());
        assertThat(planner.plan(ev.demand(0), ev.build(), 0, 0, y, c -> null).routes()).isEqualTo(first.routes());
    }

    @Test
    @DisplayName("ROUTE-3 capacity is a constraint: the prefix stops before the key that would not fit")
    void capacity() {
        Ev ev = Ev.keys(4).size(1000).local(0, 4, DRAM);
        Plan p = plan(ev.demand(0).withDestinationBytesMax(2500), ev.build());
        assertThat(p.prefixKeys()).isEqualTo(2);
        assertThat(p.stop()).isEqualTo(PrefixStop.DESTINATION_CAPACITY);
        Plan exact = plan(ev.demand(0).withDestinationBytesMax(4000), ev.build());
        assertThat(exact.prefixKeys()).isEqualTo(4);
        // a replan after 1000 delivered bytes has 1500 left: one more key
        Plan after = planner.plan(ev.demand(0).withDestinationBytesMax(2500), ev.build(), 1, 1000, new Exclusions(), c -> null);
        assertThat(after.prefixEnd()).isEqualTo(2);
        assertThat(after.fromIndex()).isEqualTo(1);
    }

    @Test
    @DisplayName("ROUTE-1 INV-8 an unsupported completion target plans nothing (HostReady is not GPU readiness)")
    void unsupportedTarget() {
        Ev ev = Ev.keys(2).local(0, 2, DRAM);
        Plan p = plan(ev.demand(0).withTarget(new CompletionTarget.GpuReady()), ev.build());
        assertThat(p.prefixKeys()).isZero();
        assertThat(p.routes()).isEmpty();
        assertThat(p.stop()).isEqualTo(PrefixStop.TARGET_UNSUPPORTED);
    }

    @Test
    @DisplayName("ROUTE-2 the four candidate kinds: local DRAM, local SSD, peer DRAM, peer SSD")
    void fourKinds() {
        Plan p = plan(Ev.keys(4).local(0, 1, DRAM).local(1, 2, SSD).peer("b", 2, 3, DRAM).peer("b", 3, 4, SSD));
        assertThat(p.routes()).extracting(Route::kind).containsExactly(RouteKind.LOCAL_DRAM, RouteKind.LOCAL_SSD,
                RouteKind.PEER_DRAM, RouteKind.PEER_SSD);
        assertThat(p.eligibleSources()).isEqualTo(4);
    }
}
