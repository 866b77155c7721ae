package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.peer.FaultProxy;
import orbitkv.membership.Endpoint;
import orbitkv.testing.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 13 "pins or credits exhausted → named refusal", the credits half, with real Managers (separate processes,
 * real etcd): R is a requester with a 1 MiB receive window; S is a source whose data listener is reached only
 * through a {@link FaultProxy}, so one READ of R can be held in flight (its credits held). A second peer route
 * that does not fit R's window is refused by R itself before S is asked (ROUTE-11: credits before the grant), by
 * name, and S takes no grant and no pin; local save/query/restore on both sides go on.
 */
@Tag("gate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReceiveCreditGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final String NS = "ns";
    private static final long WINDOW_BYTES = 1 << 20;
    /** Two of these do not fit one window; one does. */
    private static final int BLOCK_BYTES = 640 << 10;

    private ManagerCluster cluster;
    private ManagerProcess r;
    private ManagerProcess s;
    private FaultProxy sData;

    @BeforeAll
    void startCluster() throws Exception {
        cluster = ManagerCluster.format(ETCD, "credit");
        int sPort = ManagerProcess.freeLoopbackPort();
        sData = cluster.own(new FaultProxy(new Endpoint("127.0.0.1", sPort)));
        // s's data port is stalled to hold READs in flight: r asks over gRPC, else its Authorize (an AUTHORIZE frame
        // on the data channel, issue 37 item 5) would stall with them
        r = launch("r", List.of("--transfer-receive-in-flight-bytes-max", Long.toString(WINDOW_BYTES),
                "--transfer-data-channel-authorize-disabled"));
        s = launch("s", List.of("--transfer-data-port", Integer.toString(sPort), "--transfer-data-advertise",
                sData.endpoint().host() + ":" + sData.endpoint().port()));
        cluster.awaitMembers();
    }

    private ManagerProcess launch(String node, List<String> extra) throws IOException {
        return cluster.launch(node, dir -> {
            List<String> args = new ArrayList<>(List.of("--dram", "64MiB", "--block-bytes-max", "1MiB",
                    "--ssd-dir", Files.createDirectories(dir.resolve("ssd")).toString(), "--ssd", "64MiB",
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

    private static String key(int i) {
        return String.format("%064x", 0xc000 + i);
    }

    private static void save(ManagerProcess m, Map<String, byte[]> blocks) {
        ManagerApi.Reply reply = api(m).save(NS, blocks);
        assertThat(reply.status()).as(reply.text()).isEqualTo(200);
    }

    private static void published(ManagerProcess requester, ManagerProcess source) {
        ManagerCluster.published(requester, 10_000, source);
    }

    private static JsonNode requester(ManagerProcess m) {
        return api(m).status().at("/transfer/requester");
    }

    private static JsonNode source(ManagerProcess m) {
        return api(m).status().at("/transfer/source");
    }

    private static long receiveCreditRefusals(ManagerProcess m) {
        for (String line : api(m).get("/metrics").text().split("\n")) {
            if (line.startsWith("orbitkv_route_refusals_total{reason=\"receive-credits\"}")) {
                return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return 0;
    }

    private static void assertBytes(ManagerApi.Reply reply, Map<String, byte[]> expected) {
        Map<String, byte[]> back = ManagerApi.unframe(reply.body());
        assertThat(back.keySet()).containsExactlyElementsOf(expected.keySet());
        expected.forEach((k, v) -> assertThat(back.get(k)).as(k).isEqualTo(v));
    }

    private static void localOpsUnaffected(ManagerProcess m, int i) {
        byte[] p = ManagerApi.payload(8, i, 4096 + i);
        save(m, Map.of(key(i), p));
        assertThat(api(m).query(NS, List.of(key(i))).status()).isEqualTo(200);
        ManagerApi.Reply reply = api(m).restore(NS, List.of(key(i)));
        assertThat(reply.header("X-OrbitKV-Route")).isEqualTo("r=1 stop=complete routes=local-dram[0,1):ready");
        assertBytes(reply, Map.of(key(i), p));
    }

    @Test
    @DisplayName("INV-9 BND-1 ROUTE-7 ROUTE-11 receive credits exhausted → named refusal before authorization: a peer route that does not fit the requester's window beside a READ in flight is refused by the requester (receive-credits) and the source takes no grant or pin; local save/query/restore on both sides are unaffected; the credits return at drain")
    void creditsExhaustedRefusedBeforeAuthorization() throws Exception {
        byte[] first = ManagerApi.payload(4, 1, BLOCK_BYTES);
        byte[] second = ManagerApi.payload(4, 2, BLOCK_BYTES);
        save(s, Map.of(key(1), first, key(2), second));
        published(r, s);
        ManagerApi.Reply warm = api(r).restore(NS, List.of(key(2)), "tcp", 10_000); // the data connection is up
        assertThat(warm.header("X-OrbitKV-Route")).as(warm.text()).isEqualTo("r=1 stop=complete routes=peer-dram@s/1[0,1):ready+tcp");

        sData.stall(true);
        CompletableFuture<ManagerApi.Reply> held;
        try {
            held = CompletableFuture.supplyAsync(() -> api(r).restore(NS, List.of(key(1)), "tcp", 30_000));
            Await.until("r has a READ of " + BLOCK_BYTES + " bytes in flight from s", BOUND,
                    () -> requester(r).get("receive_in_flight_bytes").asLong() == BLOCK_BYTES);
            long grantsIssued = source(s).get("grants_issued").asLong();
            long authorizeGranted = requester(r).get("authorize_granted").asLong();
            long refusalsBefore = receiveCreditRefusals(r);
            assertThat(source(s).get("pins_held").asLong()).isEqualTo(1);

            ManagerApi.Reply refused = api(r).restore(NS, List.of(key(2)), "tcp", 10_000);
            assertThat(refused.status()).as(refused.text()).isEqualTo(200);
            assertThat(refused.header("X-OrbitKV-Route")).isEqualTo("r=0 stop=replans-exhausted refusal=receive-credits");
            assertThat(refused.header("X-OrbitKV-Route-Trace")).contains("replan=receive-credits");
            assertThat(refused.body()).isEmpty();
            // refused before authorization: the source was never asked, so it issued no grant and took no pin
            assertThat(source(s).get("grants_issued").asLong()).isEqualTo(grantsIssued);
            assertThat(source(s).get("pins_held").asLong()).isEqualTo(1);
            assertThat(requester(r).get("authorize_granted").asLong()).isEqualTo(authorizeGranted);
            assertThat(requester(r).at("/read_refusals/credits_exhausted").asLong()).isZero();
            assertThat(receiveCreditRefusals(r)).isEqualTo(refusalsBefore + 3); // the route and its two replans
            assertThat(requester(r).get("receive_in_flight_bytes").asLong()).isEqualTo(BLOCK_BYTES);
            // the status shows the Manager's own window: the held route's credits, and the three refusals it caused
            assertThat(requester(r).get("receive_credits_held_bytes").asLong()).isGreaterThanOrEqualTo(BLOCK_BYTES);
            assertThat(requester(r).get("receive_credits_refusals").asLong()).isGreaterThanOrEqualTo(3);
            localOpsUnaffected(r, 10);
            localOpsUnaffected(s, 11);
        } finally {
            sData.stall(false);
        }
        ManagerApi.Reply firstBack = held.get(60, TimeUnit.SECONDS);
        assertThat(firstBack.header("X-OrbitKV-Route")).as(firstBack.text())
                .isEqualTo("r=1 stop=complete routes=peer-dram@s/1[0,1):ready+tcp");
        assertBytes(firstBack, Map.of(key(1), first));
        // the credits came back at drain: the refused route now fits
        ManagerApi.Reply again = api(r).restore(NS, List.of(key(1), key(2)), "tcp", 10_000);
        assertThat(again.header("X-OrbitKV-Route")).isEqualTo("r=2 stop=complete routes=peer-dram@s/1[0,2):ready+tcp");
        Map<String, byte[]> inDemandOrder = new java.util.LinkedHashMap<>(); // Map.of has no order; the body does
        inDemandOrder.put(key(1), first);
        inDemandOrder.put(key(2), second);
        assertBytes(again, inDemandOrder);
        Await.until("r's window is empty and s holds no pins", BOUND,
                () -> requester(r).get("receive_in_flight_bytes").asLong() == 0
                        && requester(r).get("receive_credits_held_bytes").asLong() == 0
                        && source(s).get("pins_held").asLong() == 0 && source(s).get("grants_outstanding").asLong() == 0);
    }
}
