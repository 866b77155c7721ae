package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.List;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import orbitkv.index.Coverage;
import orbitkv.server.incarnation.ClusterMetadata;
import orbitkv.server.incarnation.IncarnationStatus;
import orbitkv.server.incarnation.TestMembership;
import orbitkv.server.metrics.IncarnationMetricFamilies;
import orbitkv.server.metrics.ManagerMetrics;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Incarnation;
import orbitkv.membership.LeaseStatus;
import orbitkv.membership.MemberRecordRefusals;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An etcd outage is visible before the fence, and a fenced Manager answers /health with 503 (issue 20 item 6):
 * what status, health and coverage make of {@link LeaseStatus} and of refused member records. The real-etcd
 * halves are {@code orbitkv.conformance.membership.LeaseDegradedGateTest} (membership) and
 * {@code orbitkv.conformance.manager.EtcdOutageHealthTest} (a Manager process).
 */
@Tag("unit")
class LeaseHealthTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Namespace NS = Namespace.utf8("model-a");
    private static final LeaseStatus FAILING = new LeaseStatus(0, 0, 5, 2, LeaseStatus.LeaseState.RENEWAL_FAILING, 2);

    @TempDir
    Path dir;

    private final Incarnation self = TestMembership.incarnation("a", 1);
    private TestMembership membership;
    private ClusterMetadata metadata;
    private LocalTiers tiers;
    private CacheApi api;

    @BeforeEach
    void setUp() throws Exception {
        membership = new TestMembership(self);
        Scope scope = Scope.of(List.of(NS));
        GlobalIndex index = GlobalIndex.create(self, scope, IndexConfig.defaults(), System::nanoTime, Runnable::run);
        metadata = new ClusterMetadata(membership, index, InventorySource.create(InventoryConfig.defaults()), scope, 4);
        membership.addListener(metadata::onMembershipEvent);
        ResidencySequence seq = new ResidencySequence();
        tiers = new LocalTiers(DramTier.open(dir, 4096, 4, seq), null, seq);
        api = new CacheApi(tiers, metadata, new ApiMetrics(new PrometheusRegistry(), new HttpAdmission(TestLimits.defaults())), 1 << 20, 1000,
                orbitkv.recovery.RouteSelection.create(orbitkv.recovery.RoutePolicy.defaults()),
                new orbitkv.server.restore.Speculation(tiers, orbitkv.server.config.SpeculationOptions.DEFAULTS,
                        io.netty.buffer.UnpooledByteBufAllocator.DEFAULT));
    }

    @AfterEach
    void tearDown() throws Exception {
        tiers.close();
    }

    private JsonNode body(ApiResponse r) throws Exception {
        return JSON.readTree(io.netty.buffer.ByteBufUtil.getBytes(r.body()));
    }

    private StateKey key() {
        return new StateKey(NS, new byte[] {1});
    }

    @Test
    @DisplayName("MEM-8 IDX-10 failing renewals: health degraded, coverage no longer CompleteAtWatermarks, status names the lease; healthy again after a renewal")
    void renewalFailingIsDegraded() throws Exception {
        assertThat(metadata.lookup(NS, List.of(key())).coverage()).isEqualTo(Coverage.CompleteAtWatermarks);
        assertThat(metadata.healthStatus()).isEqualTo("ok");

        membership.lease(FAILING);
        assertThat(metadata.healthStatus()).isEqualTo("degraded");
        assertThat(metadata.lookup(NS, List.of(key())).coverage()).isEqualTo(Coverage.PartialHints);
        IncarnationStatus.StatusResponse status = metadata.status(10, null, 0);
        assertThat(status.coverage()).isEqualTo("PartialHints");
        assertThat(status.membership().valid()).as("still admitted: the fence has not fallen").isTrue();
        assertThat(status.membership().lease()).isEqualTo("renewal-failing");
        assertThat(status.membership().failedRenewals()).isEqualTo(2);
        ApiResponse health = api.health();
        assertThat(health.status()).isEqualTo(200);
        assertThat(body(health).get("status").asText()).isEqualTo("degraded");

        membership.lease(new LeaseStatus(0, 0, 6, 2));
        assertThat(metadata.healthStatus()).isEqualTo("ok");
        assertThat(metadata.lookup(NS, List.of(key())).coverage()).isEqualTo(Coverage.CompleteAtWatermarks);
    }

    @Test
    @DisplayName("INV-7 a fenced Manager answers /health with 503 {\"status\": \"fenced\"}, so status-code probes route around it")
    void fencedIs503() throws Exception {
        assertThat(api.health().status()).isEqualTo(200);
        membership.fence();
        ApiResponse health = api.health();
        assertThat(health.status()).isEqualTo(503);
        assertThat(body(health).get("status").asText()).isEqualTo("fenced");
        assertThat(metadata.status(10, null, 0).membership().lease()).isEqualTo("fenced");
    }

    @Test
    @DisplayName("MEM-4 refused member records are counted in status and metrics")
    void refusedRecordsVisible() throws Exception {
        membership.refused(new MemberRecordRefusals(2, 1, 0));
        IncarnationStatus.StatusResponse status = metadata.status(10, null, 0);
        assertThat(status.membership().refusedRecords()).isEqualTo(new IncarnationStatus.RefusedRecords(2, 1, 0));
        ManagerMetrics all = ManagerMetrics.create();
        ApiMetrics metrics = new ApiMetrics(all.registry(), new HttpAdmission(TestLimits.defaults()));
        IncarnationMetricFamilies.register(all, () -> metadata);
        String text = new String(metrics.scrape(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(text).contains("orbitkv_membership_records_refused_total{reason=\"unleased\"} 2.0")
                .contains("orbitkv_membership_records_refused_total{reason=\"key_mismatch\"} 1.0");
    }
}
