package orbitkv.conformance.manager;

import orbitkv.conformance.peer.FaultProxy;
import orbitkv.conformance.peer.LinkFaults;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.MembershipAdmin;
import orbitkv.testing.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Manager process as an operator's probe sees it (issue 20 items 6 and 7): a member record written without a
 * lease is never admitted; an etcd outage turns /health degraded (and coverage PartialHints) as soon as
 * renewals fail, long before the fence; once fenced, /health answers 503.
 */
@Tag("gate")
class EtcdOutageHealthTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final Duration BOUND = Duration.ofSeconds(20);

    @Test
    @DisplayName("MEM-4 MEM-8 INV-7 unleased records are not members; an etcd outage is degraded before the fence; fenced is 503")
    void outageSeenByProbes(@TempDir Path dir) throws Exception {
        String cluster = "c-" + UUID.randomUUID().toString().substring(0, 8);
        try (MembershipAdmin admin = MembershipAdmin.connect(ETCD.endpoints(), cluster, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            assertThat(admin.format()).isInstanceOf(MembershipAdmin.Formatted.class);
        }
        try (FaultProxy proxy = FaultProxy.inFrontOf(ETCD.member(0).clientUrl());
             ManagerProcess m = ManagerProcess.launch("probe", dir.resolve("logs"), ManagerProcess.distributedArgs(cluster, "a",
                     proxy.url().toString(), Files.createDirectories(dir.resolve("dram")), "--dram", "4MiB", "--block-bytes-max", "1MiB",
                     "--lease-ttl-ms", "10000", "--fence-safety-margin-ms", "2000", "--renewal-interval-ms", "1000",
                     "--etcd-call-timeout-ms", "1000"))) {
            m.awaitReady();
            ManagerApi api = new ManagerApi(m.httpBase());
            Await.until("ok and complete", BOUND, () -> "ok".equals(api.health().get("status").asText())
                    && "CompleteAtWatermarks".equals(api.status().get("coverage").asText()));

            ETCD.put("/orbitkv/v2/" + cluster + "/members/ghost", "node_id = ghost\nnode_epoch = 1\nincarnation = "
                    + UUID.randomUUID() + "\npeer = 127.0.0.1:7001\ncontrol = 127.0.0.1:8001\nprotocol = "
                    + ClusterIdentity.PROTOCOL + "\n");
            Await.until("the plain put is refused and counted", BOUND,
                    () -> api.status().at("/membership/refused_records/unleased").asLong() >= 1);
            JsonNode status = api.status();
            assertThat(status.at("/membership/members").asInt()).as("the ghost is not a member").isEqualTo(1);
            assertThat(status.get("coverage").asText()).isEqualTo("CompleteAtWatermarks");
            assertThat(api.health().get("status").asText()).isEqualTo("ok");

            proxy.faults(LinkFaults.BLACKHOLE);
            Duration seen = Await.until("health degraded while renewals fail", BOUND,
                    () -> "degraded".equals(api.health().get("status").asText()));
            status = api.status();
            assertThat(status.at("/membership/valid").asBoolean()).as("degraded after %d ms, not fenced yet", seen.toMillis()).isTrue();
            assertThat(status.at("/membership/lease").asText()).isEqualTo("renewal-failing");
            assertThat(status.get("coverage").asText()).isEqualTo("PartialHints");
            assertThat(api.get("/health").status()).isEqualTo(200);

            Await.until("fenced at the lease deadline", BOUND, () -> api.get("/health").status() == 503);
            assertThat(api.get("/health").json().get("status").asText()).isEqualTo("fenced");
            assertThat(api.status().at("/membership/lease").asText()).isEqualTo("fenced");
            assertThat(api.get("/metrics").text()).contains("orbitkv_membership_records_refused_total{reason=\"unleased\"}");
        }
    }
}
