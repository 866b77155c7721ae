package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The arithmetic of {@link ShapedLinkHarness} (issue 39 evaluation, ROUTE-11) on injected figures: no namespaces. */
@Tag("unit")
class ShapedLinkRulesTest {
    @Test
    @DisplayName("ROUTE-11 the shaped-link trace is seeded: the same seed gives both arms the same tries, offsets inside 10..50 % of the bulk's line time")
    void traceIsSeededAndInsideTheBulk() {
        List<ShapedLinkHarness.Try> a = ShapedLinkHarness.trace(39, 500, 500_000, 16);
        assertThat(ShapedLinkHarness.trace(39, 500, 500_000, 16)).isEqualTo(a);
        assertThat(ShapedLinkHarness.trace(40, 500, 500_000, 16)).isNotEqualTo(a);
        assertThat(a).allSatisfy(t -> {
            assertThat(t.offsetMicros()).isBetween(50_000L, 250_000L);
            assertThat(t.lsSet()).isBetween(0, 15);
        });
        assertThat(a.stream().map(ShapedLinkHarness.Try::lsSet).distinct().count()).isEqualTo(16);
    }

    @Test
    @DisplayName("ROUTE-11 link utilisation: the link's bytes over its rate times the time (1 Gbit/s: 125,000,000 bytes in 1 s is 100 %)")
    void utilisationIsBytesOverRateTimesTime() {
        assertThat(ShapedLinkHarness.utilisation(125_000_000L, 1_000_000_000L)).isCloseTo(100.0, within(1e-9));
        assertThat(ShapedLinkHarness.utilisation(56_250_000L, 500_000_000L)).isCloseTo(90.0, within(1e-9));
    }

    @Test
    @DisplayName("ROUTE-11 the figures: hit rate, p99 (ceil rank), aggregate utilisation, tries inside the bulk and complete bulks")
    void figuresOfSamples() {
        List<ShapedLinkHarness.Sample> s = List.of(
                new ShapedLinkHarness.Sample(true, 10_000_000, "", true, 125_000_000L, 1_000_000_000L, true),
                new ShapedLinkHarness.Sample(false, 60_000_000, "", true, 100_000_000L, 1_000_000_000L, true),
                new ShapedLinkHarness.Sample(true, 20_000_000, "", false, 0, 1_000_000_000L, false));
        ShapedLinkHarness.Figures f = ShapedLinkHarness.Figures.of(s);
        assertThat(f.hitPct()).isCloseTo(200.0 / 3, within(1e-9));
        assertThat(f.misses()).isEqualTo(1);
        assertThat(f.p50Ms()).isEqualTo(20.0);
        assertThat(f.p99Ms()).isEqualTo(60.0);
        assertThat(f.utilPct()).isCloseTo(60.0, within(1e-9));
        assertThat(f.utilMinPct()).isEqualTo(0.0);
        assertThat(f.overlapped()).isEqualTo(2);
        assertThat(f.bulkComplete()).isEqualTo(2);
    }
}
