package orbitkv.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import orbitkv.server.incarnation.TestMembership;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySessionServer;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.InventorySubscriber;
import orbitkv.inventory.RequesterSessionMetrics;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SecondsHistogram;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.SourceSessionMetrics;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The inventory's metric snapshots become one Prometheus family per name, both ends' points in each (DIAG-2, DIAG-3). */
@Tag("unit")
class SessionMetricFamiliesTest {
    private static final Incarnation SELF = new Incarnation(new NodeId("n1"), new NodeEpoch(1), new UUID(1, 1));

    private static String scrape(PrometheusRegistry registry) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, registry.scrape());
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    @DisplayName("DIAG-2 DIAG-3 a real server and subscriber: every session family registers once")
    void realEndsRegisterOnce() throws IOException {
        GlobalIndex index = GlobalIndex.create(SELF, Scope.all(), IndexConfig.defaults(), System::nanoTime, Runnable::run);
        InventorySource source = InventorySource.create(InventoryConfig.defaults());
        try (InventorySessionServer srv = InventorySessionServer.create(source, TestMembership.CLUSTER, SELF, () -> null,
                SessionConfig.defaults());
             InventorySubscriber sub = InventorySubscriber.create(TestMembership.CLUSTER, SELF, Scope.all(), index, e -> {
                 throw new AssertionError("no session starts before onMembership");
             }, SessionConfig.defaults())) {
            ManagerMetrics metrics = ManagerMetrics.create();
            metrics.add(source::intentionalWaitSeconds, List.of(SessionMetricFamilies.INTENTIONAL_WAIT));
            metrics.add(() -> new SessionMetricFamilies.Ends(srv.metrics(), sub.metrics()), SessionMetricFamilies.FAMILIES);
            PrometheusRegistry registry = metrics.registry();
            List<String> names = registry.scrape().stream().map(m -> m.getMetadata().getPrometheusName()).toList();
            assertThat(names).as("one family per name").doesNotHaveDuplicates().contains("orbitkv_session_frames",
                    "orbitkv_session_bytes", "orbitkv_session_rejections", "orbitkv_session_bootstrap_seconds",
                    "orbitkv_session_ack_round_trip_seconds", "orbitkv_session_peak_outstanding_credit_bytes",
                    "orbitkv_inventory_intentional_wait_seconds");
            assertThat(scrape(registry)).contains("orbitkv_inventory_intentional_wait_seconds_bucket{le=\"0.005\"} 0");
        }
    }

    @Test
    @DisplayName("DIAG-3 snapshot values reach the exposition: side labels, enum names, cumulative buckets")
    void valuesReachTheExposition() throws IOException {
        SecondsHistogram ack = new SecondsHistogram(new double[] {0.01, 0.1, Double.POSITIVE_INFINITY}, new long[] {2, 1, 1}, 3.5);
        SourceSessionMetrics source = new SourceSessionMetrics(Map.of(SourceFrame.BodyCase.DELTA, 3L),
                Map.of(RequesterFrame.BodyCase.ACK, 2L), 900, 10, 4, 100, 50, Map.of(ErrorCause.FENCED, 1L), 1, 0, ack, 700).withSendScheduling(5, 0);
        RequesterSessionMetrics requester = new RequesterSessionMetrics(Map.of(RequesterFrame.BodyCase.ACK, 2L),
                Map.of(SourceFrame.BodyCase.DELTA, 3L), 900, 1200, Map.of(), Map.of(ResetCause.DISCONNECT, 1L), 2,
                SecondsHistogram.empty(0.5));
        ManagerMetrics metrics = ManagerMetrics.create();
        metrics.add(() -> new SessionMetricFamilies.Ends(source, requester), SessionMetricFamilies.FAMILIES);
        PrometheusRegistry registry = metrics.registry();
        assertThat(scrape(registry)).contains(
                "orbitkv_session_frames_total{direction=\"sent\",kind=\"DELTA\",side=\"source\"} 3.0",
                "orbitkv_session_frames_total{direction=\"received\",kind=\"DELTA\",side=\"requester\"} 3.0",
                "orbitkv_session_rejections_total{cause=\"FENCED\",side=\"source\"} 1.0",
                "orbitkv_session_resets_total{cause=\"DISCONNECT\"} 1.0",
                "orbitkv_session_bytes_total{measure=\"decoded\",side=\"requester\"} 1200.0",
                "orbitkv_session_mutations_total{kind=\"coalesced\"} 4.0",
                "orbitkv_session_mismatch_drops_total{side=\"requester\"} 2.0",
                "orbitkv_session_ack_round_trip_seconds_bucket{le=\"0.01\"} 2",
                "orbitkv_session_ack_round_trip_seconds_bucket{le=\"0.1\"} 3",
                "orbitkv_session_ack_round_trip_seconds_bucket{le=\"+Inf\"} 4",
                "orbitkv_session_ack_round_trip_seconds_sum 3.5",
                "orbitkv_session_peak_outstanding_credit_bytes 700.0",
                "orbitkv_session_send_scheduling_total{event=\"yield\"} 5.0",
                "orbitkv_session_send_scheduling_total{event=\"queue_refused\"} 0.0");
    }
}
