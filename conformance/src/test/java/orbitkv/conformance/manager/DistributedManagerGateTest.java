package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import orbitkv.conformance.etcd.Await;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.MembershipAdmin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Real-Manager gates without InventorySessions (DESIGN §10): three Managers as separate OS processes on
 * loopback, one real etcd. A and B subscribe to all namespaces, C to {@code ns-c} only. The methods share
 * the cluster and run in order; the destructive ones (kill -9, SIGTERM) come last.
 *
 * <p>What needs the session (await success, cross-node candidates, evict visibility, bootstrap of a
 * restarted incarnation) is not asserted here; this gate checks everything that must already hold
 * without it: registration, the fence's identity, payload integrity, refusals, coverage PartialHints,
 * exclusion after kill -9 and deregistration on SIGTERM.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DistributedManagerGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final Duration BOUND = Duration.ofSeconds(20);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String cluster = "gate-" + UUID.randomUUID().toString().substring(0, 8);
    private Path work;
    private UUID clusterUuid;
    private ManagerProcess a;
    private ManagerProcess b;
    private ManagerProcess c;
    private final List<ManagerProcess> all = new ArrayList<>();
    private JsonNode aFence;

    @BeforeAll
    void startCluster() throws Exception {
        work = Files.createTempDirectory("orbitkv-gate-");
        try (MembershipAdmin admin = MembershipAdmin.connect(ETCD.endpoints(), cluster, 2_000)) {
            MembershipAdmin.FormatResult r = admin.format();
            assertThat(r).isInstanceOf(MembershipAdmin.Formatted.class);
            clusterUuid = ((MembershipAdmin.Formatted) r).cluster().uuid();
        }
        a = launch("a", List.of());
        b = launch("b", List.of());
        c = launch("c", List.of("--metadata-namespace", "ns-c"));
        for (ManagerProcess m : List.of(a, b, c)) {
            m.awaitReady();
        }
    }

    private ManagerProcess launch(String node, List<String> extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("manager", "--cluster", cluster, "--node-id", node,
                "--etcd", ETCD.endpoints().toString(), "--http-listen", "127.0.0.1:0", "--peer-listen", "127.0.0.1:0",
                "--dram", "32MiB", "--block-bytes-max", "1MiB", "--dram-dir", dir(node).toString(),
                "--lease-ttl-ms", "4000", "--fence-safety-margin-ms", "1000", "--renewal-interval-ms", "500",
                "--etcd-call-timeout-ms", "1000", "--shutdown-drain-ms", "5000"));
        args.addAll(extra);
        ManagerProcess m = ManagerProcess.launch(node + "-" + all.size(), work.resolve("logs"), args);
        all.add(m);
        return m;
    }

    private Path dir(String node) throws IOException {
        return Files.createDirectories(work.resolve("dram-" + node + "-" + all.size()));
    }

    @AfterAll
    void stopCluster() throws IOException {
        all.forEach(ManagerProcess::close);
        ManagerProcess.deleteTree(work);
    }

    private static ManagerApi api(ManagerProcess m) {
        return new ManagerApi(m.httpBase());
    }

    private static String key(int i) {
        return String.format("%064x", 0xa000 + i);
    }

    @Test
    @Order(0)
    @DisplayName("MEM-1 a Manager started against an unformatted cluster exits non-zero naming `orbitkv admin format`")
    void unformattedRefused() throws Exception {
        ManagerProcess m = ManagerProcess.launch("unformatted", work.resolve("logs"), List.of("manager",
                "--cluster", cluster + "-none", "--node-id", "x", "--etcd", ETCD.endpoints().toString(),
                "--http-listen", "127.0.0.1:0", "--dram", "4MiB", "--block-bytes-max", "1MiB",
                "--dram-dir", dir("x").toString()));
        all.add(m);
        assertThat(m.awaitExit(BOUND)).isEqualTo(1);
        assertThat(m.stderrText()).contains("orbitkv admin format");
    }

    @Test
    @Order(1)
    @DisplayName("MEM-2 MEM-7 IDX-2 three Managers register as epoch-1 incarnations and every view admits all three")
    void registration() {
        for (ManagerProcess m : List.of(a, b, c)) {
            assertThat(m.incarnation()).startsWith(m.name().substring(0, 1) + "/1/");
            Await.until(m + " admits three members", BOUND, () -> api(m).status().at("/membership/members").asInt() == 3);
            JsonNode s = api(m).status();
            assertThat(s.at("/membership/valid").asBoolean()).isTrue();
            assertThat(s.at("/cluster/uuid").asText()).isEqualTo(clusterUuid.toString());
            assertThat(s.at("/cluster/name").asText()).isEqualTo(cluster);
            assertThat(s.at("/self/incarnation").asText()).isEqualTo(m.incarnation());
            assertThat(s.at("/protocol").asText()).isEqualTo(ClusterIdentity.PROTOCOL);
            assertThat(api(m).health().at("/status").asText()).isEqualTo("ok");
            assertThat(api(m).health().at("/mode").asText()).isEqualTo("distributed");
        }
        String metrics = api(b).get("/metrics").text();
        assertThat(metrics).contains("orbitkv_inventory_intentional_wait", "orbitkv_index_lock_hold_seconds",
                "orbitkv_membership_members 3", "orbitkv_await_waiters");
        assertThat(ETCD.keys("/orbitkv/v2/" + cluster + "/members/")).hasSize(3);
    }

    @Test
    @Order(2)
    @DisplayName("API-1 API-2 INV-1 INV-3 PERF-4 save on A, sync returns A's fence at the head; restore returns the exact payloads")
    void saveSyncRestore() {
        Map<String, byte[]> blocks = new LinkedHashMap<>();
        for (int i = 0; i < 8; i++) {
            blocks.put(key(i), ManagerApi.payload(1, i, 4096 + i));
        }
        ManagerApi.Reply saved = api(a).save("ns-a", blocks);
        assertThat(saved.status()).as(saved.text()).isEqualTo(200);
        JsonNode s = saved.json();
        assertThat(s.get("saved")).hasSize(8);
        long first = s.at("/saved/0/sequence").asLong();
        for (int i = 0; i < 8; i++) { // one journal record per residence, contiguous (INV-3)
            assertThat(s.at("/saved/" + i + "/sequence").asLong()).isEqualTo(first + i);
        }
        long head = s.get("head_sequence").asLong();
        assertThat(head).isEqualTo(first + 7);

        ManagerApi.Reply sync = api(a).sync();
        assertThat(sync.status()).as(sync.text()).isEqualTo(200);
        aFence = sync.json().get("inventory_fence");
        assertThat(aFence.get("protocol").asText()).isEqualTo(ClusterIdentity.PROTOCOL);
        assertThat(aFence.get("cluster_uuid").asText()).isEqualTo(clusterUuid.toString());
        assertThat(aFence.get("source_incarnation").asText()).isEqualTo(a.incarnation());
        assertThat(aFence.get("source_node_epoch").asLong()).isEqualTo(1);
        assertThat(aFence.get("inventory_sequence").asLong()).isEqualTo(head);

        List<String> keys = new ArrayList<>(blocks.keySet());
        ManagerApi.Reply restored = api(a).restore("ns-a", keys);
        assertThat(restored.status()).isEqualTo(200);
        assertThat(restored.header("X-OrbitKV-Restored")).isEqualTo("8");
        Map<String, byte[]> back = ManagerApi.unframe(restored.body());
        assertThat(back.keySet()).containsExactlyElementsOf(keys);
        for (int i = 0; i < 8; i++) {
            byte[] p = back.get(key(i));
            assertThat(p).isEqualTo(blocks.get(key(i)));
            assertThat(ManagerApi.header(p)).containsExactly(1L, (long) i);
        }
        JsonNode st = api(a).status();
        assertThat(st.at("/inventory/head_sequence").asLong()).isEqualTo(head);
        assertThat(st.at("/inventory/last_publication/sequence").asLong()).isEqualTo(head);
        assertThat(st.at("/inventory/journal_bytes").asLong()).isPositive();
    }

    @Test
    @Order(3)
    @DisplayName("IDX-3 IDX-7 IDX-13 without installed views coverage is PartialHints, never Complete; A's own tiers answer locally")
    void coverageWithoutSessions() throws Exception {
        JsonNode onA = api(a).query("ns-a", List.of(key(0), key(1), key(99))).json();
        assertThat(onA.get("coverage").asText()).isEqualTo("PartialHints");
        assertThat(onA.get("recoverable_prefix").asInt()).isEqualTo(2);
        JsonNode replica = onA.at("/candidates/0/replicas/0");
        assertThat(replica.get("local").asBoolean()).isTrue();
        assertThat(replica.at("/owner/incarnation").asText()).isEqualTo(a.incarnation());
        assertThat(replica.get("medium").asText()).isEqualTo("DRAM");

        JsonNode onB = api(b).query("ns-a", List.of(key(0))).json();
        assertThat(onB.get("coverage").asText()).isEqualTo("PartialHints");
        assertThat(onB.at("/candidates/0/replicas")).isEmpty(); // no session: no evidence, and none invented
        assertThat(onB.get("recoverable_prefix").asInt()).isZero();
        JsonNode status = api(b).status();
        assertThat(status.get("coverage").asText()).isEqualTo("PartialHints");
        List<String> owners = new ArrayList<>();
        status.get("owners").forEach(o -> {
            owners.add(o.at("/owner/incarnation").asText());
            assertThat(o.get("state").asText()).isIn("AWAITING", "BOOTSTRAPPING");
        });
        assertThat(owners).containsExactlyInAnyOrder(a.incarnation(), c.incarnation());

        // A's own fence awaited on A: its tiers are authoritative locally.
        ManagerApi.Reply own = api(a).await(aFence, api(a).status().at("/scope/digest").asText(), 1000);
        assertThat(own.status()).as(own.text()).isEqualTo(200);
        assertThat(own.json().get("applied_sequence").asLong()).isGreaterThanOrEqualTo(aFence.get("inventory_sequence").asLong());
    }

    @Test
    @Order(4)
    @DisplayName("IDX-4 IDX-5 a Manager scoped to ns-c reports that scope, answers Unavailable outside it and still serves its local cache there")
    void scopedManager() {
        JsonNode s = api(c).status();
        assertThat(s.at("/scope/namespaces")).hasSize(1);
        assertThat(s.at("/scope/namespaces/0").asText()).isEqualTo("ns-c");
        assertThat(s.at("/scope/digest").asText()).isNotEqualTo(api(b).status().at("/scope/digest").asText());

        assertThat(api(c).save("ns-a", Map.of(key(50), ManagerApi.payload(5, 50, 100))).status()).isEqualTo(200);
        JsonNode q = api(c).query("ns-a", List.of(key(50))).json();
        assertThat(q.get("coverage").asText()).isEqualTo("Unavailable");
        assertThat(q.at("/candidates/0/replicas/0/local").asBoolean()).isTrue();
        assertThat(q.get("recoverable_prefix").asInt()).isEqualTo(1);
        ManagerApi.Reply r = api(c).restore("ns-a", List.of(key(50)));
        assertThat(ManagerApi.unframe(r.body()).get(key(50))).isEqualTo(ManagerApi.payload(5, 50, 100));
        assertThat(api(c).query("ns-c", List.of(key(1))).json().get("coverage").asText()).isEqualTo("PartialHints");
    }

    @Test
    @Order(5)
    @DisplayName("BND-1 API-4 API-5 malformed or refused requests get the documented 4xx code and change no state (table)")
    void refusals() throws Exception {
        ManagerApi api = api(b);
        String digest = api.status().at("/scope/digest").asText();
        Map<String, String> vars = new LinkedHashMap<>();
        vars.put("{A_FENCE_OTHER_CLUSTER}", with(aFence, "cluster_uuid", new UUID(1, 1).toString()).toString());
        vars.put("{A_FENCE_OLD_INCARNATION}", with(aFence, "source_incarnation", "a/1/" + new UUID(2, 2)).toString());
        vars.put("{A_FENCE_BAD_PROTOCOL}", with(aFence, "protocol", "orbitkv/inventory-stream/v3").toString());
        vars.put("{A_FENCE}", aFence.toString());
        vars.put("{DIGEST}", digest);
        vars.put("{KEYS129}", String.join(", ", IntStream.range(0, 129).mapToObj(i -> "\"" + key(i) + "\"").toList()));
        int rows = 0;
        for (String line : table()) {
            String[] parts = line.split("\\|");
            String[] request = parts[0].trim().split(" ", 2);
            String contentType = parts[1].trim();
            String body = parts[2].trim();
            String[] expected = parts[3].replaceAll("#.*", "").trim().split(" ");
            String before = state(api);
            ManagerApi.Reply r;
            if (request[0].equals("GET")) {
                r = api.get(request[1]);
            } else {
                byte[] bytes = body.equals("-") ? null : body.startsWith("hex:") ? HexFormat.of().parseHex(body.substring(4))
                        : substitute(body.substring(5), vars).getBytes(StandardCharsets.UTF_8);
                r = api.post(request[1], contentType.equals("-") ? null : contentType, bytes);
            }
            assertThat(r.status()).as(line + " -> " + r.text()).isEqualTo(Integer.parseInt(expected[0]));
            assertThat(r.json().at("/error/code").asText()).as(line).isEqualTo(expected[1]);
            assertThat(r.json().at("/error/message").asText()).as(line).isNotBlank();
            assertThat(state(api)).as("state after " + line).isEqualTo(before);
            rows++;
        }
        assertThat(rows).isEqualTo(15);
    }

    private static ObjectNode with(JsonNode fence, String field, String value) {
        ObjectNode copy = fence.deepCopy();
        copy.put(field, value);
        return copy;
    }

    private static String substitute(String body, Map<String, String> vars) {
        String out = body;
        for (Map.Entry<String, String> e : vars.entrySet()) {
            out = out.replace(e.getKey(), e.getValue());
        }
        return out;
    }

    private static String state(ManagerApi api) {
        JsonNode s = api.status();
        JsonNode h = api.health();
        return s.at("/inventory/head_sequence").asLong() + " " + s.at("/membership/members").asInt() + " "
                + h.at("/tiers/0/blocks").asLong() + " " + h.at("/tiers/0/resident_bytes").asLong();
    }

    private static List<String> table() throws IOException {
        try (InputStream in = DistributedManagerGateTest.class.getResourceAsStream("distributed-refusals.table")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
                    .filter(l -> !l.isBlank() && !l.startsWith("#")).toList();
        }
    }

    @Test
    @Order(6)
    @DisplayName("IDX-13 INV-7 MEM-8 kill -9 of A: B excludes A's incarnation; A restarts as a new incarnation with nothing old")
    void killAndRestart() throws Exception {
        String old = a.incarnation();
        a.kill9();
        Duration excluded = Await.until("B drops A after its lease expires", BOUND,
                () -> api(b).status().at("/membership/members").asInt() == 2);
        JsonNode s = api(b).status();
        s.get("owners").forEach(o -> {
            if (o.at("/owner/incarnation").asText().equals(old)) {
                assertThat(o.get("state").asText()).isEqualTo("REMOVED");
            }
        });
        assertThat(ETCD.keys("/orbitkv/v2/" + cluster + "/members/")).hasSize(2);

        a = launch("a", List.of());
        a.awaitReady();
        assertThat(a.incarnation()).startsWith("a/2/").isNotEqualTo(old);
        Await.until("B admits A's new incarnation", BOUND, () -> {
            for (JsonNode o : api(b).status().get("owners")) {
                if (o.at("/owner/incarnation").asText().equals(a.incarnation())) {
                    return true;
                }
            }
            return false;
        });
        assertThat(api(b).status().at("/membership/members").asInt()).isEqualTo(3);
        // A new incarnation is a new journal lineage over empty tiers: nothing old reappears (INV-7, OPS-4).
        JsonNode fresh = api(a).status();
        assertThat(fresh.at("/inventory/head_sequence").asLong()).isZero();
        JsonNode q = api(a).query("ns-a", List.of(key(0))).json();
        assertThat(q.at("/candidates/0/replicas")).isEmpty();
        assertThat(api(a).restore("ns-a", List.of(key(0))).header("X-OrbitKV-Restored")).isEqualTo("0");
        System.out.println("[gate] B excluded A's killed incarnation after " + excluded.toMillis() + " ms (lease TTL 4000 ms)");
    }

    @Test
    @Order(7)
    @DisplayName("INV-7 MEM-6 SIGTERM on C drains, revokes its lease (peers drop it at once) and exits 0")
    void sigtermDeregisters() throws Exception {
        c.sigterm();
        assertThat(c.awaitExit(BOUND)).as(c.stderrText()).isZero();
        assertThat(ETCD.keys("/orbitkv/v2/" + cluster + "/members/")).hasSize(2);
        Await.until("B drops C", BOUND, () -> api(b).status().at("/membership/members").asInt() == 2);
        assertThat(c.stderrText()).contains("deregistered");
    }

    @Test
    @Order(8)
    @DisplayName("INV-7 INV-10 MEM-8 etcd frozen past the lease deadline: B fences itself; remote admission stops, local save/query/restore keep working")
    void fencedKeepsLocalService() throws Exception {
        EtcdFixture.Member etcd = ETCD.member(0);
        etcd.stop(); // SIGSTOP: renewals time out, the conservative local deadline passes (TTL 4 s - margin 1 s)
        try {
            Await.until("B fences itself", BOUND, () -> api(b).health().at("/status").asText().equals("fenced"));
            ManagerApi api = api(b);
            ManagerApi.Reply saved = api.save("ns-a", Map.of(key(70), ManagerApi.payload(7, 70, 256)));
            assertThat(saved.status()).as(saved.text()).isEqualTo(200);
            assertThat(ManagerApi.unframe(api.restore("ns-a", List.of(key(70))).body()).get(key(70)))
                    .isEqualTo(ManagerApi.payload(7, 70, 256));
            JsonNode q = api.query("ns-a", List.of(key(70))).json();
            assertThat(q.get("coverage").asText()).isEqualTo("Unavailable");
            assertThat(q.at("/candidates/0/replicas/0/local").asBoolean()).isTrue();
            ManagerApi.Reply await = api.await(aFence, api.status().at("/scope/digest").asText(), 100);
            assertThat(await.status()).isEqualTo(503);
            assertThat(await.json().at("/error/code").asText()).isEqualTo("MEMBERSHIP_EXPIRED");
            ManagerApi.Reply sync = api.sync();
            assertThat(sync.status()).isEqualTo(503);
            assertThat(sync.json().at("/error/code").asText()).isEqualTo("MEMBERSHIP_EXPIRED");
            assertThat(api.status().at("/membership/valid").asBoolean()).isFalse();
        } finally {
            etcd.cont();
        }
    }
}
