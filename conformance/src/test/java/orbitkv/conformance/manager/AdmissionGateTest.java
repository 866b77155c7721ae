package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.testing.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 39 (DESIGN S6; ROUTE-11) with real Managers (separate processes, real etcd): an engine's P/D WRITE bytes,
 * charged through R's {@code /admission} API to the rx lane of R's NIC (loopback here), fill the same window R's
 * peer restore READs need; R then refuses the peer route by name before asking S, and its status and metrics show
 * the engine's charge. When the engine's transport progress returns bytes, the route runs and its node charge
 * returns at drain; termination evidence returns the rest. Issue 39 item 2: S's peer-serving egress is charged to
 * the tx lane of its data listener's NIC beside an engine's WRITEs there; a full lane refuses the READ by name at S
 * and the charge returns when the send ended. Issue 39 item 6: R's restore trace names its lane's headroom.
 */
@Tag("gate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdmissionGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final String NS = "ns";
    private static final long MIB = 1 << 20;
    private static final int BLOCK_BYTES = 640 << 10;

    private ManagerCluster cluster;
    private ManagerProcess r;
    private ManagerProcess s;

    @BeforeAll
    void startCluster() throws Exception {
        cluster = ManagerCluster.format(ETCD, "admission");
        r = launch("r", List.of("--admission-window-bytes-max", "4MiB", "--admission-reserve-percent", "0",
                "--admission-lease-batch-bytes-max", "1MiB"));
        // issue 39 item 2: S's lo/tx lane is small too, so an engine's WRITE charge can fill it
        s = launch("s", List.of("--admission-window-bytes-max", "4MiB", "--admission-reserve-percent", "0",
                "--admission-lease-batch-bytes-max", "1MiB"));
        cluster.awaitMembers();
    }

    private ManagerProcess launch(String node, List<String> extra) throws IOException {
        return cluster.launch(node, dir -> {
            List<String> args = new ArrayList<>(List.of("--dram", "64MiB", "--block-bytes-max", "1MiB",
                    "--shutdown-drain-ms", "5000", "--idle-liveness-ms", "500"));
            args.addAll(extra);
            return args;
        });
    }

    @AfterAll
    void stopCluster() throws IOException {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static ManagerApi api(ManagerProcess m) {
        return ManagerCluster.api(m);
    }

    private static JsonNode post(ManagerProcess m, String path, String json) {
        ManagerApi.Reply reply = api(m).postJson(path, json);
        assertThat(reply.status()).as(path + " " + reply.text()).isEqualTo(200);
        return reply.json();
    }

    private static JsonNode admission(ManagerProcess m) {
        return api(m).status().get("admission");
    }

    private static String key(int i) {
        return String.format("%064x", 0xad000 + i);
    }

    @Test
    @DisplayName("ROUTE-11 engine WRITE bytes charged through the API reduce the window Manager READs see: the peer route is refused by name before authorization, status and metrics show the charge; transport progress lets it run")
    void engineChargeRefusesPeerReads() {
        byte[] payload = ManagerApi.payload(5, 1, BLOCK_BYTES);
        assertThat(api(s).save(NS, Map.of(key(1), payload)).status()).isEqualTo(200);
        ManagerCluster.published(r, 10_000, s);
        assertThat(admission(r).get("manager_read_lane").asText()).isEqualTo("lo/rx");

        long engine = post(r, "/admission/register", "{\"kind\":\"engine-write\",\"instance\":\"pd-0\"}")
                .get("submitter").asLong();
        List<Long> leases = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            JsonNode g = post(r, "/admission/charge", "{\"submitter\":" + engine + ",\"nic\":\"lo\",\"direction\":\"rx\","
                    + "\"bytes\":" + MIB + ",\"deadline_ms\":10000}");
            assertThat(g.get("outcome").asText()).as(g.toString()).isEqualTo("granted");
            leases.add(g.get("lease").asLong());
        }
        long grantsIssued = api(s).status().at("/transfer/source/grants_issued").asLong();

        ManagerApi.Reply refused = api(r).restore(NS, List.of(key(1)), "tcp", 10_000);
        assertThat(refused.status()).as(refused.text()).isEqualTo(200);
        assertThat(refused.header("X-OrbitKV-Route")).isEqualTo("r=0 stop=replans-exhausted refusal=receive-credits");
        assertThat(refused.body()).isEmpty();
        assertThat(api(s).status().at("/transfer/source/grants_issued").asLong()).isEqualTo(grantsIssued);
        JsonNode a = admission(r);
        assertThat(a.at("/charged_bytes_by_kind/engine-write").asLong()).isEqualTo(4 * MIB);
        assertThat(a.at("/refusals/window-full").asLong()).isGreaterThanOrEqualTo(3);
        assertThat(api(r).get("/metrics").text())
                .contains("orbitkv_admission_charged_by_kind_bytes{kind=\"engine-write\"} 4194304");

        post(r, "/admission/return", "{\"submitter\":" + engine + ",\"lease\":" + leases.get(0) + ",\"bytes\":" + MIB
                + ",\"evidence\":\"transport-progress\"}");
        ManagerApi.Reply back = api(r).restore(NS, List.of(key(1)), "tcp", 10_000);
        assertThat(back.header("X-OrbitKV-Route")).as(back.text())
                .isEqualTo("r=1 stop=complete routes=peer-dram@s/1[0,1):ready+tcp");
        assertThat(ManagerApi.unframe(back.body()).get(key(1))).isEqualTo(payload);
        Await.until("r's READ charge returned at drain", BOUND,
                () -> admission(r).at("/charged_bytes_by_kind/manager-read").asLong() == 0);
        assertThat(post(r, "/admission/terminate", "{\"submitter\":" + engine + "}").get("bytes").asLong())
                .isEqualTo(3 * MIB);
        assertThat(admission(r).at("/charged_bytes_by_kind/engine-write").asLong()).isZero();
    }

    @Test
    @DisplayName("ROUTE-11 engine WRITE bytes charged to the source's lo/tx lane refuse its peer-serving egress by name (egress_nic_window); after transport progress the READ is served and the egress charge returns when the send ended")
    void engineChargeOnSourceTxRefusesItsEgress() {
        byte[] payload = ManagerApi.payload(5, 2, BLOCK_BYTES);
        assertThat(api(s).save(NS, Map.of(key(2), payload)).status()).isEqualTo(200);
        ManagerCluster.published(r, 10_000, s);
        long engine = post(s, "/admission/register", "{\"kind\":\"engine-write\",\"instance\":\"pd-tx\"}")
                .get("submitter").asLong();
        List<Long> leases = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            JsonNode g = post(s, "/admission/charge", "{\"submitter\":" + engine + ",\"nic\":\"lo\",\"direction\":\"tx\","
                    + "\"bytes\":" + MIB + ",\"deadline_ms\":10000}");
            assertThat(g.get("outcome").asText()).as(g.toString()).isEqualTo("granted");
            leases.add(g.get("lease").asLong());
        }
        long nicRefusals = api(s).status().at("/transfer/source/data_refusals/egress_nic_window").asLong();

        ManagerApi.Reply refused = api(r).restore(NS, List.of(key(2)), "tcp", 10_000);
        assertThat(refused.status()).as(refused.text()).isEqualTo(200);
        assertThat(refused.header("X-OrbitKV-Route")).as(refused.text()).startsWith("r=0 ");
        assertThat(refused.header("X-OrbitKV-Route-Trace")).as("issue 39 item 6: the lane in the trace")
                .contains(" net=lo/rx:free=");
        assertThat(api(s).status().at("/transfer/source/data_refusals/egress_nic_window").asLong())
                .isGreaterThan(nicRefusals);
        assertThat(admission(s).at("/charged_bytes_by_kind/manager-egress").asLong()).as("a refusal charges nothing")
                .isZero();
        assertThat(api(s).get("/metrics").text()).contains("reason=\"egress_nic_window\"");

        post(s, "/admission/return", "{\"submitter\":" + engine + ",\"lease\":" + leases.get(0) + ",\"bytes\":" + MIB
                + ",\"evidence\":\"transport-progress\"}");
        ManagerApi.Reply back = api(r).restore(NS, List.of(key(2)), "tcp", 10_000);
        assertThat(back.header("X-OrbitKV-Route")).as(back.text())
                .isEqualTo("r=1 stop=complete routes=peer-dram@s/1[0,1):ready+tcp");
        assertThat(ManagerApi.unframe(back.body()).get(key(2))).isEqualTo(payload);
        Await.until("s's egress charge returned when the send ended", BOUND,
                () -> admission(s).at("/charged_bytes_by_kind/manager-egress").asLong() == 0);
        assertThat(post(s, "/admission/terminate", "{\"submitter\":" + engine + "}").get("bytes").asLong())
                .isEqualTo(3 * MIB);
    }
}
