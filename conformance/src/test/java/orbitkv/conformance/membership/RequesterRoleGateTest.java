package orbitkv.conformance.membership;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerApi;
import orbitkv.conformance.manager.ManagerProcess;
import orbitkv.membership.Endpoint;
import orbitkv.membership.MemberRole;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipConfig;
import orbitkv.membership.NodeId;
import orbitkv.membership.Registrant;
import orbitkv.testing.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * MEM-11 with real etcd and two Manager processes: a requester-only member (record line {@code role = requester})
 * joins the cluster; every Manager admits it (the member count grows) but opens no session to it and its coverage
 * stays exact ({@code CompleteAtWatermarks}). The control: a serving member that serves nothing, registered the same
 * way, does degrade every Manager's coverage to {@code PartialHints} (so the check can fail), and coverage is exact
 * again once it leaves.
 */
@Tag("gate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RequesterRoleGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final String NS = "ns";
    private static final MembershipConfig CONFIG = new MembershipConfig(10_000, 2_000, 1_000, 1_000, 50, 500, 512);

    private final String cluster = Gates.cluster();
    private Path work;
    private final List<ManagerProcess> managers = new ArrayList<>();

    @BeforeAll
    void startCluster() throws IOException {
        work = Files.createTempDirectory("orbitkv-requester-role-");
        Gates.format(ETCD.endpoints(), cluster);
        for (String node : List.of("a", "b")) {
            Path dir = work.resolve(node);
            List<String> args = ManagerProcess.distributedArgs(cluster, node, ETCD.endpoints().toString(),
                    Files.createDirectories(dir.resolve("dram")), "--dram", "16MiB", "--block-bytes-max", "1MiB",
                    "--ssd-dir", Files.createDirectories(dir.resolve("ssd")).toString(), "--ssd", "16MiB",
                    "--shutdown-drain-ms", "2000", "--idle-liveness-ms", "500");
            args.addAll(ManagerProcess.LOAD_TOLERANT_LEASE);
            managers.add(ManagerProcess.launch(node, work.resolve("logs"), args));
        }
        managers.forEach(ManagerProcess::awaitReady);
        awaitMembers(2);
        for (ManagerProcess m : managers) {
            int i = managers.indexOf(m);
            ManagerApi.Reply saved = api(m).save(NS, Map.of(String.format("%02x", 0x10 + i), ManagerApi.payload(1, i, 256)));
            assertThat(saved.status()).as(saved.text()).isEqualTo(200);
        }
        awaitCoverage("CompleteAtWatermarks");
    }

    @AfterAll
    void stopCluster() throws IOException {
        managers.forEach(ManagerProcess::close);
        ManagerProcess.deleteTree(work);
    }

    private static ManagerApi api(ManagerProcess m) {
        return new ManagerApi(m.httpBase());
    }

    private void awaitMembers(int n) {
        for (ManagerProcess m : managers) {
            Await.until(m + " admits " + n + " members", BOUND,
                    () -> api(m).status().at("/membership/members").asInt() == n);
        }
    }

    private void awaitCoverage(String coverage) {
        for (ManagerProcess m : managers) {
            Await.until(m + " coverage " + coverage, BOUND, () -> coverage.equals(api(m).status().at("/coverage").asText())
                    && coverage.equals(queryCoverage(m)));
        }
    }

    /** The coverage a lookup of an in-scope key answers (what a restore plans with). */
    private static String queryCoverage(ManagerProcess m) {
        ManagerApi.Reply r = api(m).query(NS, List.of("ff"));
        assertThat(r.status()).as(r.text()).isEqualTo(200);
        return r.json().at("/coverage").asText();
    }

    private Membership register(String node, MemberRole role) {
        Registrant who = new Registrant(cluster, new NodeId(node), new Endpoint("127.0.0.1", 9), new Endpoint("127.0.0.1", 9),
                Optional.empty(), role);
        return Gates.registered(ETCD.endpoints(), who, CONFIG);
    }

    @Test
    @DisplayName("MEM-11 a requester-only member is admitted by every Manager, gets no session, and leaves every Manager's coverage exact; a serving member that serves nothing degrades it (control)")
    void requesterOnlyKeepsCoverageExact() {
        String member = "/orbitkv/v2/" + cluster + "/members/";
        try (Membership requester = register("ext-req", MemberRole.REQUESTER)) {
            assertThat(ETCD.get(member + "ext-req")).endsWith("\nrole = requester\n");
            awaitMembers(3);
            for (ManagerProcess m : managers) {
                JsonNode status = api(m).status();
                assertThat(status.at("/coverage").asText()).as("%s coverage", m).isEqualTo("CompleteAtWatermarks");
                assertThat(queryCoverage(m)).as("%s lookup coverage", m).isEqualTo("CompleteAtWatermarks");
                assertThat(status.at("/sessions/admitted_sources").asInt()).as("%s sources", m).isEqualTo(1);
                assertThat(status.at("/sessions/capacity_complete").asBoolean()).isTrue();
                assertThat(status.at("/sessions/requester").toString()).doesNotContain("ext-req");
                assertThat(status.at("/owners").toString()).doesNotContain("ext-req");
            }

            // The control: the same registration with the serving role (and no inventory behind it) degrades.
            try (Membership ghost = register("ghost", MemberRole.SERVING)) {
                assertThat(ETCD.get(member + "ghost")).doesNotContain("role");
                awaitMembers(4);
                awaitCoverage("PartialHints");
                for (ManagerProcess m : managers) {
                    assertThat(api(m).status().at("/sessions/admitted_sources").asInt()).isEqualTo(2);
                }
            }
            awaitMembers(3);
            awaitCoverage("CompleteAtWatermarks");
            assertThat(requester.fenced()).isFalse();
        }
        awaitMembers(2);
    }
}
