package orbitkv.recovery;

import static orbitkv.inventory.Medium.DRAM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import orbitkv.index.Coverage;
import orbitkv.index.KeyCandidates;
import orbitkv.index.LookupOutcome;
import orbitkv.index.Replica;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.recovery.fixtures.Ev;
import orbitkv.recovery.fixtures.FakePorts;
import orbitkv.recovery.fixtures.ManualClock;
import orbitkv.recovery.runtime.DefaultRouteSelection;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The exported contract's own rules: validation, settings, the facade's plumbing. */
@Tag("unit")
class ContractTest {
    @Test
    @DisplayName("IDX-14 a demand is 1..128 distinct keys of its one namespace")
    void demandValidation() {
        List<StateKey> keys = Ev.keyList(3);
        assertThat(Demand.hostReady(Ev.NS, keys, 0).keys()).isEqualTo(keys);
        assertThatThrownBy(() -> Demand.hostReady(Ev.NS, List.of(), 0)).hasMessageContaining("1..128");
        assertThatThrownBy(() -> Demand.hostReady(Ev.NS, Ev.keyList(129), 0)).hasMessageContaining("1..128");
        assertThatThrownBy(() -> Demand.hostReady(Ev.NS, List.of(Ev.key(1), Ev.key(1)), 0)).hasMessageContaining("repeats");
        assertThatThrownBy(() -> Demand.hostReady(Namespace.utf8("other"), keys, 0)).hasMessageContaining("namespace");
        assertThatThrownBy(() -> Demand.hostReady(Ev.NS, keys, 0).withDestinationBytesMax(-1)).hasMessageContaining(">= 0");
        assertThat(new CompletionTarget.HostReady().supported()).isTrue();
        assertThat(new CompletionTarget.GpuReady().supported()).isFalse();
    }

    @Test
    @DisplayName("ROUTE-1 evidence must describe exactly the demand's keys in order")
    void evidenceMatches() {
        Ev ev = Ev.keys(2).local(0, 2, DRAM);
        Demand other = Demand.hostReady(Ev.NS, List.of(Ev.key(1), Ev.key(0)), 0);
        try (RouteSelection s = RouteSelection.create(RoutePolicy.defaults())) {
            assertThatThrownBy(() -> s.plan(other, ev.build())).hasMessageContaining("evidence key 0");
            assertThatThrownBy(() -> s.plan(Ev.keys(3).demand(0), ev.build())).hasMessageContaining("3");
        }
        assertThatThrownBy(() -> new KeyEvidence(Ev.key(0), List.of(new LocalResidence(DRAM, 1, 1), new LocalResidence(DRAM, 2, 1)),
                List.of(), false)).hasMessageContaining("two local DRAM");
    }

    @Test
    @DisplayName("ROUTE-1 evidence joins an index lookup with local residences, in demand order")
    void evidenceFromLookup() {
        Replica r = new Replica(Ev.inc("b"), DRAM, 9, 10, false);
        LookupOutcome.Candidates c = new LookupOutcome.Candidates(Coverage.PartialHints, 11,
                List.of(new KeyCandidates(Ev.key(0), List.of(r), true), new KeyCandidates(Ev.key(1), List.of(), false)));
        Evidence e = Evidence.of(c, List.of(List.of(), List.of(new LocalResidence(DRAM, 3, 10))), Evidence.allKinds());
        assertThat(e.coverage()).isEqualTo(Coverage.PartialHints);
        assertThat(e.viewGeneration()).isEqualTo(11);
        assertThat(e.keys().get(0).remote()).containsExactly(r);
        assertThat(e.keys().get(0).truncated()).isTrue();
        assertThat(e.keys().get(1).local()).hasSize(1);
        assertThat(Evidence.localOnly(List.of(KeyEvidence.none(Ev.key(0)))).qualifiedKinds())
                .containsExactlyInAnyOrder(RouteKind.LOCAL_DRAM, RouteKind.LOCAL_SSD);
    }

    @Test
    @DisplayName("BND-6 the policy defaults are DESIGN §9's; every bad value names its setting, a broken relation both")
    void policy() {
        RoutePolicy d = RoutePolicy.defaults();
        assertThat(List.of(d.alternativesPerBoundaryMax(), d.alternativesPerBatchMax(), d.observationsMin(), d.replansMax()))
                .containsExactly(8, 128, 32, 2);
        assertThat(d.selectionMode()).isEqualTo(SelectionMode.SHADOW);
        RoutePolicy m = RoutePolicy.fromManagerOptions(4, 64, 16, 1);
        assertThat(List.of(m.alternativesPerBoundaryMax(), m.alternativesPerBatchMax(), m.observationsMin(), m.replansMax()))
                .containsExactly(4, 64, 16, 1);
        assertThatThrownBy(() -> RoutePolicy.fromManagerOptions(16, 8, 32, 2))
                .hasMessageContaining("alternativesPerBoundaryMax (16)").hasMessageContaining("alternativesPerBatchMax (8)");
        assertThatThrownBy(() -> RoutePolicy.fromManagerOptions(8, 128, 32, 3)).hasMessageContaining("replansMax");
        assertThatThrownBy(() -> RoutePolicy.fromManagerOptions(0, 128, 32, 2)).hasMessageContaining("alternativesPerBoundaryMax");
        assertThatThrownBy(() -> RoutePolicy.fromManagerOptions(8, 128, 0, 2)).hasMessageContaining("observationsMin");
        assertThatThrownBy(() -> d.withObservationWindow(16, 8)).hasMessageContaining("observationsMin (32)")
                .hasMessageContaining("observationsPerClassMax (16)");
        assertThatThrownBy(() -> d.withErrorQuantile(0.2)).hasMessageContaining("errorQuantile");
        assertThatThrownBy(() -> d.withHysteresis(1.5, 0)).hasMessageContaining("hysteresisFraction");
        assertThat(d.hysteresisNanos(100_000)).isEqualTo(20_000);
        assertThat(d.hysteresisNanos(1_000_000)).isEqualTo(100_000);
    }

    @Test
    @DisplayName("ROUTE-3 ROUTE-9 the facade: retained traces page newest first, load evidence by exact incarnation, metrics")
    void facade(@TempDir Path dir) throws Exception {
        ManualClock clock = new ManualClock();
        FakePorts ports = new FakePorts(clock);
        try (DefaultRouteSelection s = new DefaultRouteSelection(RoutePolicy.defaults().withTracesRetainedMax(3),
                TraceSampling.every(2).withDirectory(dir), clock)) {
            Ev ev = Ev.keys(2).local(0, 1, DRAM).peer("b", 1, 2, DRAM);
            assertThat(s.recordLoad(new LoadSummary(Ev.inc("b"), 500, 2, 4096, 0))).isEqualTo(LoadSummary.Recorded.ACCEPTED);
            clock.advance(3_000_000);
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                ids.add(s.restore(ev.demand(clock.getAsLong() + 1_000_000_000L), ev.build(), ports).trace().id());
            }
            TracePage page = s.traces(2, OptionalLong.empty());
            assertThat(page.traces()).extracting(RouteTrace::id).containsExactly(ids.get(4), ids.get(3));
            assertThat(s.traces(10, page.nextBeforeId()).traces()).extracting(RouteTrace::id).containsExactly(ids.get(2));
            assertThat(page.traces().get(0).loadAgeNanos()).isPresent();
            assertThat(s.load(Ev.inc("b"))).isPresent();
            assertThat(s.load(Ev.inc("b", 2))).isEmpty();
            RouteMetrics m = s.metrics();
            assertThat(m.restores()).isEqualTo(5);
            assertThat(m.byKind().get(RouteKind.PEER_DRAM).ready()).isEqualTo(5);
            assertThat(m.byKind().get(RouteKind.LOCAL_DRAM).bytesReady()).isEqualTo(5 * 4096);
            assertThat(m.stops().get(PrefixStop.COMPLETE)).isEqualTo(5);
            assertThat(m.decisions().get(DecisionReason.UNSAMPLED)).isEqualTo(5);
            assertThat(m.tracesSampled()).isEqualTo(2);
            assertThat(m.traceLinesWritten()).isEqualTo(2);
            assertThat(m.loadAccepted()).isEqualTo(1);
            assertThat(Files.readAllLines(s.traceFile())).hasSize(2);
            Plan p = s.plan(ev.demand(0), ev.build());
            assertThat(p.prefixKeys()).isEqualTo(2);
            assertThat(s.metrics().plans()).isEqualTo(1);
            assertThat(s.metrics().restores()).isEqualTo(5); // plan() executes nothing
        }
    }
}
