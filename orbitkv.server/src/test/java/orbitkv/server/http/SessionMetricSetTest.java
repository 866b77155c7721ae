package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.UUID;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySessionServer;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.InventorySubscriber;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.SessionMetricSet;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Both session ends count into one metric set, registered once: one family per name (DIAG-2, DIAG-3). */
class SessionMetricSetTest {
    private static final Incarnation SELF = new Incarnation(new NodeId("n1"), new NodeEpoch(1), new UUID(1, 1));

    private static InventorySessionServer server(SessionMetricSet metrics) {
        return InventorySessionServer.create(InventorySource.create(InventoryConfig.defaults()), TestMembership.CLUSTER, SELF,
                () -> null, SessionConfig.defaults(), metrics);
    }

    private static InventorySubscriber subscriber(SessionMetricSet metrics) {
        GlobalIndex index = GlobalIndex.create(SELF, Scope.all(), IndexConfig.defaults(), System::nanoTime, Runnable::run);
        return InventorySubscriber.create(TestMembership.CLUSTER, SELF, Scope.all(), index, e -> {
            throw new AssertionError("no session starts before onMembership");
        }, SessionConfig.defaults(), metrics);
    }

    @Test
    @DisplayName("DIAG-2 DIAG-3 one set shared by both ends registers once and exposes each session family exactly once")
    void sharedSetRegistersOnce() {
        SessionMetricSet shared = SessionMetricSet.create();
        try (InventorySessionServer srv = server(shared); InventorySubscriber sub = subscriber(shared)) {
            ClusterMetadata.Sessions sessions = new ClusterMetadata.Sessions(sub, srv, shared, 8);
            PrometheusRegistry registry = new PrometheusRegistry();
            sessions.metrics().metrics().forEach(registry::register);
            java.util.List<String> names = registry.scrape().stream().map(m -> m.getMetadata().getPrometheusName()).toList();
            assertThat(names).as("one family per name").doesNotHaveDuplicates().hasSize(shared.metrics().size())
                    .contains("orbitkv_session_frames", "orbitkv_session_bytes", "orbitkv_session_rejections",
                            "orbitkv_session_bootstrap_seconds", "orbitkv_session_peak_outstanding_credit_bytes");
            assertThat(srv.metrics()).isEqualTo(sub.metrics()).isEqualTo(shared.metrics());
        }
    }

    @Test
    @DisplayName("DIAG-3 ends counting into different sets are refused: their same-named families would collide in one registry")
    void separateSetsRefused() {
        SessionMetricSet a = SessionMetricSet.create();
        SessionMetricSet b = SessionMetricSet.create();
        try (InventorySessionServer srv = server(a); InventorySubscriber sub = subscriber(b)) {
            assertThatThrownBy(() -> new ClusterMetadata.Sessions(sub, srv, a, 8))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("share");
            PrometheusRegistry registry = new PrometheusRegistry();
            a.metrics().forEach(registry::register);
            assertThatThrownBy(() -> b.metrics().forEach(registry::register)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
