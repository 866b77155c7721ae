package orbitkv.conformance.perf;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerProcess;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The default run's smoke of the route ablation harness (so it cannot rot): one block of the three modes over a
 * short seeded trace with a slowed peer behind the fault proxy, and a short local-restore overhead run. It checks
 * collection only (every restore complete and byte-exact, every mode run on the identical trace, the comparisons
 * computed for both metrics), never the figures: this is not a reported run. The formal run is
 * {@code scripts/bench routes}.
 */
@Tag("gate")
class RouteAblationHarnessSmokeTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    @Test
    @DisplayName("PERF-5 PERF-6 ROUTE-6 the route ablation replays one seeded trace under fixed, shadow and cost-driven selection "
            + "with a slowed peer, byte-exact, and computes per-block ratios with bootstrap intervals; the overhead run restores locally")
    void smoke() throws Exception {
        RouteAblationHarness.Settings s = new RouteAblationHarness.Settings(1, 24, 2, 8 << 10, 2, 1L << 20, 4, 30, 6, 3, 20261130L);
        assertThat(s.trace()).isEqualTo(s.trace()); // the trace is a function of the seed
        assertThat(s.learnedFrom()).isBetween(8, 23); // contested demands remain after the learning point
        Path work = Files.createTempDirectory("orbitkv-routes-smoke-");
        try {
            RouteAblationHarness h = new RouteAblationHarness(s, BenchRun.create("routes-smoke"), ETCD, work);
            RouteAblationHarness.AblationResult a = h.ablation();
            assertThat(a.runs()).hasSize(3);
            assertThat(a.runs()).extracting(RouteAblationHarness.RunResult::mode)
                    .containsExactlyInAnyOrder(RouteAblationHarness.Mode.values());
            for (RouteAblationHarness.RunResult r : a.runs()) {
                assertThat(r.failure()).as(r.mode().name()).isNull();
                assertThat(r.nanos()).hasSize(24);
                assertThat(java.util.Arrays.stream(r.nanos()).min().orElseThrow()).isPositive();
                assertThat(r.kinds()).containsExactlyElementsOf(s.trace().stream().map(RouteAblationHarness.Request::kind).toList());
                if (r.mode() != RouteAblationHarness.Mode.COST_DRIVEN) {
                    assertThat(r.switchesExecuted()).as("only cost-driven executes a switch").isZero();
                    assertThat(r.slowRoutes()).as("the fixed plan serves every contested prefix from the slowed peer")
                            .isEqualTo(r.contested());
                }
            }
            assertThat(a.comparisons()).hasSize(12).allSatisfy(c -> {
                assertThat(c.ratios()).hasSize(1);
                assertThat(c.geometricMean()).isPositive().isFinite();
                assertThat(c.lower()).isEqualTo(c.upper()); // one block: every resample is that block
                assertThat(c.judged()).as("one run per mode is never judged (PERF-6)").isFalse();
                assertThat(c.wins()).isFalse();
            });
            RouteAblationHarness.OverheadResult o = h.overhead();
            assertThat(o.nanos()).containsOnlyKeys(RouteAblationHarness.Mode.values());
            o.nanos().values().forEach(n -> {
                assertThat(n).hasSize(30);
                assertThat(java.util.Arrays.stream(n).min().orElseThrow()).isPositive();
            });
            assertThat(o.comparisons()).hasSize(4).allSatisfy(c -> assertThat(c.ratios()).hasSize(3));
        } finally {
            ManagerProcess.deleteTree(work);
        }
    }
}
