package orbitkv.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import orbitkv.transfer.GrantEnd;
import orbitkv.transfer.TransferEngineStatus;
import orbitkv.transfer.TransferSourceStatus;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The transfer source's snapshot becomes Prometheus families labelled by closed enums only (DIAG-2). */
@Tag("unit")
class TransferMetricFamiliesTest {
    @Test
    @DisplayName("INV-9 DIAG-2 sends cut by their grant's end are one counter family labelled by cause, every cause listed")
    void sendsCutByCause() throws IOException {
        TransferSourceStatus source = new TransferSourceStatus(0, 0, 0, 0, 3, Map.of(GrantEnd.EXPIRED, 2L), Map.of(),
                Map.of(), Map.of(), Map.of(), 0, 0, Map.of(GrantEnd.EXPIRED, 1L, GrantEnd.EXCLUDED, 2L), Map.of(),
                Map.of(), Map.of(), 0);
        TransferEngineStatus engine = new TransferEngineStatus(List.of(), 0, 0, Map.of(), Map.of(), 0, 0, 0, Map.of(), 0,
                0, 0, 0, Map.of(), Map.of(), 0, 0, 0, 0, 0, 0, 0, 0, 0);
        ManagerMetrics metrics = ManagerMetrics.create();
        metrics.add(() -> new TransferMetricFamilies.Ends(source, engine), TransferMetricFamilies.FAMILIES);
        PrometheusRegistry registry = metrics.registry();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, registry.scrape());
        String text = out.toString(StandardCharsets.UTF_8);
        assertThat(text).contains("orbitkv_transfer_sends_cut_total{cause=\"expired\"} 1.0",
                "orbitkv_transfer_sends_cut_total{cause=\"excluded\"} 2.0",
                "orbitkv_transfer_sends_cut_total{cause=\"released\"} 0.0",
                "orbitkv_transfer_sends_cut_total{cause=\"fenced\"} 0.0",
                "orbitkv_transfer_sends_cut_total{cause=\"closed\"} 0.0");
    }
}
