package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import orbitkv.conformance.etcd.Await;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.peer.FaultProxy;
import orbitkv.conformance.peer.LinkFaults;
import orbitkv.membership.Endpoint;
import orbitkv.membership.MembershipAdmin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 14's slow-peer gate with real Managers (separate processes, real etcd): A and B hold replicas of the same
 * block; A's data listener is reached only through a {@link FaultProxy} whose bandwidth cap makes every READ from A
 * take about {@value #SLOW_READ_MS} ms, B's is loopback. C restores with {@code --route-selection cost-driven}. The
 * fixed policy picks A (the lower owner, ROUTE-4); C learns A's cost from those restores and B's from restores of a
 * block only B holds. The cost-driven choice may switch to B only once both classes have 32 comparable executed
 * successes and the gain exceeds the measured uncertainty plus the hysteresis margin (ROUTE-3, ROUTE-6).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SlowPeerSwitchGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final String NS = "ns";
    private static final int OBSERVATIONS_MIN = 32;
    private static final int BLOCK_BYTES = 160 << 10;
    /** A's cap: one block in about 500 ms, far beyond loopback's milliseconds and their jitter under load. */
    private static final long CAP_BYTES_PER_SECOND = 320 << 10;
    static final long SLOW_READ_MS = 500;
    /** Rounds after both classes reached 32 within which the switch must have happened (noise in the error bound). */
    private static final int SWITCH_ROUNDS_MAX = 4;

    private final String cluster = "slow-" + UUID.randomUUID().toString().substring(0, 8);
    private Path work;
    private ManagerProcess a;
    private ManagerProcess b;
    private ManagerProcess c;
    private FaultProxy aData;
    private final List<ManagerProcess> all = new ArrayList<>();

    @BeforeAll
    void startCluster() throws Exception {
        work = Files.createTempDirectory("orbitkv-slow-peer-");
        try (MembershipAdmin admin = MembershipAdmin.connect(ETCD.endpoints(), cluster, 10_000)) {
            assertThat(admin.format()).isInstanceOf(MembershipAdmin.Formatted.class);
        }
        int aPort = freePort();
        aData = new FaultProxy(new Endpoint("127.0.0.1", aPort));
        a = launch("a", List.of("--transfer-data-port", Integer.toString(aPort), "--transfer-data-advertise",
                aData.endpoint().host() + ":" + aData.endpoint().port()));
        b = launch("b", List.of());
        c = launch("c", List.of("--route-selection", "cost-driven", "--route-observations-min",
                Integer.toString(OBSERVATIONS_MIN)));
        for (ManagerProcess m : all) {
            m.awaitReady();
        }
        for (ManagerProcess m : all) {
            Await.until(m + " admits three members", BOUND, () -> api(m).status().at("/membership/members").asInt() == 3);
        }
    }

    private ManagerProcess launch(String node, List<String> extra) throws IOException {
        Path dir = work.resolve(node);
        List<String> args = new ArrayList<>(List.of("manager", "--cluster", cluster, "--node-id", node,
                "--etcd", ETCD.endpoints().toString(), "--http-listen", "127.0.0.1:0", "--peer-listen", "127.0.0.1:0",
                "--dram", "64MiB", "--block-bytes-max", "1MiB", "--dram-dir", Files.createDirectories(dir.resolve("dram")).toString(),
                "--ssd-dir", Files.createDirectories(dir.resolve("ssd")).toString(), "--ssd", "64MiB",
                "--lease-ttl-ms", "4000", "--fence-safety-margin-ms", "1000", "--renewal-interval-ms", "500",
                "--etcd-call-timeout-ms", "1000", "--shutdown-drain-ms", "5000", "--idle-liveness-ms", "500"));
        args.addAll(extra);
        ManagerProcess m = ManagerProcess.launch(node, work.resolve("logs"), args);
        all.add(m);
        return m;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    @AfterAll
    void stopCluster() throws IOException {
        all.forEach(ManagerProcess::close);
        if (aData != null) {
            aData.close();
        }
        ManagerProcess.deleteTree(work);
    }

    private static ManagerApi api(ManagerProcess m) {
        return new ManagerApi(m.httpBase());
    }

    private static String key(int i) {
        return String.format("%064x", 0xd000 + i);
    }

    private static void save(ManagerProcess m, Map<String, byte[]> blocks) {
        ManagerApi.Reply reply = api(m).save(NS, blocks);
        assertThat(reply.status()).as(reply.text()).isEqualTo(200);
    }

    private static void published(ManagerProcess requester, ManagerProcess... sources) {
        for (ManagerProcess s : sources) {
            ManagerApi.Reply sync = api(s).sync();
            assertThat(sync.status()).as(sync.text()).isEqualTo(200);
            ManagerApi.Reply await = api(requester).await(sync.json().get("inventory_fence"),
                    api(requester).status().at("/scope/digest").asText(), 10_000);
            assertThat(await.status()).as(await.text()).isEqualTo(200);
        }
    }

    /** One restore of {@code k} over TCP; byte-exact; returns {@code [route header, trace header]}. */
    private String[] restore(String k, byte[] expected) {
        ManagerApi.Reply reply = api(c).restore(NS, List.of(k), "tcp", 20_000);
        assertThat(reply.status()).as(reply.text()).isEqualTo(200);
        String route = reply.header("X-OrbitKV-Route");
        assertThat(route).startsWith("r=1 stop=complete");
        assertThat(ManagerApi.unframe(reply.body()).get(k)).as(k).isEqualTo(expected);
        return new String[] {route, reply.header("X-OrbitKV-Route-Trace")};
    }

    private static final String FROM_A = "r=1 stop=complete routes=peer-dram@a/1[0,1):ready+tcp";
    private static final String FROM_B = "r=1 stop=complete routes=peer-dram@b/1[0,1):ready+tcp";

    @Test
    @DisplayName("ROUTE-3 ROUTE-4 ROUTE-6 a slow peer (bandwidth cap through the fault proxy) stays the fixed choice while either side has fewer than 32 comparable executed successes, and stops being chosen (cost-driven switch, executed) once 32 on both sides show it slower by more than the margin")
    void slowPeerStopsBeingChosenAfter32() {
        byte[] shared = ManagerApi.payload(11, 1, BLOCK_BYTES);
        byte[] onlyB = ManagerApi.payload(11, 2, BLOCK_BYTES);
        byte[] warm = ManagerApi.payload(11, 3, BLOCK_BYTES);
        save(a, Map.of(key(1), shared, key(3), warm));
        save(b, Map.of(key(1), shared, key(2), onlyB, key(3), warm));
        published(c, a, b); // SSD copies are written by then
        // Warm-up in another route class (peer-ssd): data connections and code paths are up before the first
        // peer-dram observation, and no peer-dram observation is taken.
        assertThat(api(a).evict(NS, List.of(key(3)), "DRAM").status()).isEqualTo(200);
        assertThat(api(b).evict(NS, List.of(key(3)), "DRAM").status()).isEqualTo(200);
        published(c, a, b);
        assertThat(restore(key(3), warm)[0]).isEqualTo("r=1 stop=complete routes=peer-ssd@a/1[0,1):ready+tcp");
        assertThat(api(a).evict(NS, List.of(key(3)), "ALL").status()).isEqualTo(200);
        published(c, a);
        assertThat(restore(key(3), warm)[0]).isEqualTo("r=1 stop=complete routes=peer-ssd@b/1[0,1):ready+tcp");

        aData.faults(LinkFaults.NONE.withBandwidth(CAP_BYTES_PER_SECOND));
        long t0 = System.nanoTime();
        int aSeen = 0;
        int bSeen = 0;
        // Rounds 1..31: neither class has 32 successes when the shared block is planned: the fixed choice (A) executes.
        for (int round = 1; round < OBSERVATIONS_MIN; round++) {
            assertThat(restore(key(2), onlyB)[0]).isEqualTo(FROM_B);
            bSeen++;
            String[] r = restore(key(1), shared);
            assertThat(r[0]).as("round %d: A %d, B %d successes when planned; trace %s", round, aSeen, bSeen, r[1])
                    .isEqualTo(FROM_A);
            assertThat(r[1]).doesNotContain(":switch");
            aSeen++;
        }
        // A 31, B 31 when planned; then A 32, B 31: the fast side is still under-sampled, no switch
        for (int i = 0; i < 2; i++) {
            String[] r = restore(key(1), shared);
            assertThat(r[0]).as("A %d, B %d successes when planned; trace %s", aSeen, bSeen, r[1]).isEqualTo(FROM_A);
            assertThat(r[1]).doesNotContain(":switch");
            aSeen++;
        }
        long slowMs = (System.nanoTime() - t0) / 1_000_000;
        assertThat(slowMs).as("A's capped READs took their time").isGreaterThan((aSeen - 1) * SLOW_READ_MS * 8 / 10);
        // B's 32nd success: both classes are sampled; the gain (≈ 500 ms) exceeds errors plus hysteresis: switch
        int switchedAfter = -1;
        String switchTrace = null;
        for (int round = 0; round < SWITCH_ROUNDS_MAX && switchedAfter < 0; round++) {
            assertThat(restore(key(2), onlyB)[0]).isEqualTo(FROM_B);
            bSeen++;
            String[] r = restore(key(1), shared);
            if (r[0].equals(FROM_B)) {
                assertThat(r[1]).contains("sel=cost-driven:switch:executed");
                switchedAfter = bSeen;
                switchTrace = r[1];
            } else {
                assertThat(r[0]).isEqualTo(FROM_A);
                aSeen++;
            }
        }
        System.out.println("SLOW-PEER switched with A " + aSeen + ", B " + switchedAfter + " successes; A's capped READs "
                + slowMs + " ms for the first " + OBSERVATIONS_MIN + "+1; trace " + switchTrace);
        assertThat(switchedAfter).as("switched within " + SWITCH_ROUNDS_MAX + " rounds after 32 on both sides")
                .isGreaterThanOrEqualTo(OBSERVATIONS_MIN);
        // and it stays switched (the slow peer is no longer chosen)
        assertThat(restore(key(1), shared)[0]).isEqualTo(FROM_B);
    }
}
