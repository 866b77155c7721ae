package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Metric;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Both session ends own metrics of the same names; one registry must expose them as one family each. */
class SessionMetricsUnionTest {
    private static List<Metric> end() {
        return List.of(Counter.builder().name("orbitkv_session_frames_total").help("h").labelNames("side").build(),
                Counter.builder().name("orbitkv_session_duplicate_acks_total").help("h").build(),
                Gauge.builder().name("orbitkv_session_peak_outstanding_credit_bytes").help("h").build(),
                Histogram.builder().name("orbitkv_session_bootstrap_seconds").help("h").build());
    }

    @Test
    @DisplayName("DIAG-3 the two ends' same-named metrics register once: distinct labels listed, counters summed, gauge max, observed histogram kept")
    void merges() throws IOException {
        List<Metric> source = end();
        List<Metric> requester = end();
        PrometheusRegistry direct = new PrometheusRegistry();
        source.forEach(direct::register);
        assertThatThrownBy(() -> requester.forEach(direct::register)).isInstanceOf(IllegalArgumentException.class);

        ((Counter) source.get(0)).labelValues("source").inc(3);
        ((Counter) requester.get(0)).labelValues("requester").inc(5);
        ((Counter) source.get(1)).inc(2);
        ((Counter) requester.get(1)).inc(4);
        ((Gauge) source.get(2)).set(100);
        ((Gauge) requester.get(2)).set(40);
        ((Histogram) requester.get(3)).observe(0.25);

        PrometheusRegistry registry = new PrometheusRegistry();
        registry.register(new SessionMetricsUnion(source, requester));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, registry.scrape());
        String text = out.toString(StandardCharsets.UTF_8);
        assertThat(text).contains("orbitkv_session_frames_total{side=\"source\"} 3.0",
                "orbitkv_session_frames_total{side=\"requester\"} 5.0", "orbitkv_session_duplicate_acks_total 6.0",
                "orbitkv_session_peak_outstanding_credit_bytes 100.0", "orbitkv_session_bootstrap_seconds_count 1");
        assertThat(text.lines().filter(l -> l.startsWith("# TYPE orbitkv_session_frames_total"))).hasSize(1);
    }
}
