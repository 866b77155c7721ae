package orbitkv.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.recovery.RouteMetrics;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The status families are data read from one snapshot per scrape (issue 34 item 2; DIAG-2): a part's snapshot is
 * taken once however many families read it, so two families of one scrape never disagree; a name is registered once;
 * a sample with the wrong label count fails naming its family.
 */
@Tag("unit")
class ManagerMetricsTest {
    /** A status whose two figures move together: a torn read would show them apart. */
    record Pair(long a, long b) {}

    private static String scrape(ManagerMetrics metrics) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, metrics.registry().scrape());
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    @DisplayName("DIAG-2 a scrape takes each part's snapshot once and every family reads that one snapshot")
    void oneSnapshotPerScrape() throws IOException {
        AtomicInteger taken = new AtomicInteger();
        AtomicLong live = new AtomicLong();
        ManagerMetrics metrics = ManagerMetrics.create();
        List<MetricFamily<Pair>> families = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            families.add(MetricFamily.gauge("test_a_" + i, "a", Pair::a));
            families.add(MetricFamily.gauge("test_b_" + i, "b", Pair::b));
        }
        metrics.add(() -> {
            taken.incrementAndGet();
            long v = live.incrementAndGet(); // the live figure moves at every read
            return new Pair(v, v);
        }, families);
        String text = scrape(metrics);
        assertThat(taken).as("snapshots taken by one scrape of 12 families").hasValue(1);
        assertThat(text).contains("test_a_0 1.0", "test_b_5 1.0").doesNotContain(" 2.0");
        scrape(metrics);
        assertThat(taken).hasValue(2);
    }

    @Test
    @DisplayName("DIAG-2 a family name is registered once: a second part naming it is refused and adds nothing")
    void duplicateNameRefused() throws IOException {
        ManagerMetrics metrics = ManagerMetrics.create();
        metrics.add(() -> new Pair(1, 2), List.of(MetricFamily.gauge("test_x", "x", Pair::a)));
        assertThatThrownBy(() -> metrics.add(() -> new Pair(3, 4), List.of(MetricFamily.gauge("test_y", "y", Pair::a),
                MetricFamily.gauge("test_x", "x again", Pair::b))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("test_x");
        assertThat(scrape(metrics)).contains("test_x 1.0").doesNotContain("test_y");
    }

    @Test
    @DisplayName("DIAG-2 a sample whose label values do not match the family's label names fails naming the family")
    void labelCountChecked() {
        ManagerMetrics metrics = ManagerMetrics.create();
        metrics.add(() -> new Pair(1, 2), List.of(MetricFamily.<Pair>counter("test_labelled", "l", List.of("kind"),
                (p, out) -> out.value(p.a(), "one", "two"))));
        assertThatThrownBy(() -> scrape(metrics)).hasMessageContaining("test_labelled").hasMessageContaining("[kind]");
    }

    @Test
    @DisplayName("DIAG-2 every status family of the server has a unique name and a help line")
    void everyFamilyOnce() throws IOException {
        ManagerMetrics metrics = ManagerMetrics.create();
        List<MetricFamily<?>> all = new ArrayList<>(RouteMetricFamilies.FAMILIES);
        all.addAll(TierMetricFamilies.families(true, true));
        all.addAll(SessionMetricFamilies.FAMILIES);
        all.add(SessionMetricFamilies.INTENTIONAL_WAIT);
        all.addAll(TransferMetricFamilies.FAMILIES);
        assertThat(all).allSatisfy(f -> assertThat(f.help()).as(f.name()).isNotBlank());
        assertThat(all.stream().map(MetricFamily::name).toList()).doesNotHaveDuplicates();
        RouteMetrics idle = new RouteMetrics(0, 0, java.util.Map.of(), java.util.Map.of(), java.util.Map.of(), java.util.Map.of(),
                java.util.Map.of(), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        metrics.add(() -> idle, RouteMetricFamilies.FAMILIES);
        assertThat(scrape(metrics)).contains("orbitkv_route_plans_total 0.0", "orbitkv_route_drain_pending 0.0");
    }
}
