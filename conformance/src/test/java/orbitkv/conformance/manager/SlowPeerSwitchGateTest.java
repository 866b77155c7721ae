package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.peer.FaultProxy;
import orbitkv.conformance.peer.LinkFaults;
import orbitkv.membership.Endpoint;
import orbitkv.recovery.RoutePolicy;
import orbitkv.testing.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
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
 *
 * <p>What is a function of the schedule and what of the machine (issue 25): C learns from wall-clock READ times,
 * so on a busy machine the capped class's error bound can grow past the gain and C, correctly, keeps the fixed
 * plan. The gate therefore reads C's sampled route traces (every restore, {@code --route-trace-sample-every 1}):
 * each decision once both classes are sampled must be exactly the switch rule applied to the predictions C
 * recorded (fixed and alternative mean and error), with no tolerance. Whether the recorded gain clears the margin
 * is the machine's part; it must happen within {@value #SWITCH_ROUNDS_MAX} rounds (a generous bound: each round
 * adds an observation to both classes, so the 95 % error quantile outgrows a few preempted READs).
 */
@Tag("gate")
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
    /**
     * Rounds after both classes reached 32 within which the switch must have happened: 1-2 on a quiet machine; 4
     * failed at a load average of 3-5 (issue 25), so 16, with every intervening decision checked against the rule.
     */
    static final int SWITCH_ROUNDS_MAX = 16;
    private static final ObjectMapper JSON = new ObjectMapper();

    private ManagerCluster cluster;
    private ManagerProcess a;
    private ManagerProcess b;
    private ManagerProcess c;
    private FaultProxy aData;

    @BeforeAll
    void startCluster() throws Exception {
        cluster = ManagerCluster.format(ETCD, "slow");
        int aPort = ManagerProcess.freeLoopbackPort();
        aData = cluster.own(new FaultProxy(new Endpoint("127.0.0.1", aPort)));
        a = launch("a", List.of("--transfer-data-port", Integer.toString(aPort), "--transfer-data-advertise",
                aData.endpoint().host() + ":" + aData.endpoint().port()));
        b = launch("b", List.of());
        c = launch("c", List.of("--route-selection", "cost-driven", "--route-observations-min",
                Integer.toString(OBSERVATIONS_MIN), "--route-trace-dir", Files.createDirectories(traces()).toString(),
                "--route-trace-sample-every", "1"));
        cluster.awaitMembers();
    }

    private Path traces() {
        return cluster.work().resolve("traces");
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
        return String.format("%064x", 0xd000 + i);
    }

    private static void save(ManagerProcess m, Map<String, byte[]> blocks) {
        ManagerApi.Reply reply = api(m).save(NS, blocks);
        assertThat(reply.status()).as(reply.text()).isEqualTo(200);
    }

    private static void published(ManagerProcess requester, ManagerProcess... sources) {
        ManagerCluster.published(requester, 10_000, sources);
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

    /** C's last recorded route trace (one JSONL line per restore, written before the restore answers). */
    private JsonNode lastTrace() {
        try (var files = Files.list(traces())) {
            Path file = files.filter(f -> f.getFileName().toString().endsWith(".jsonl")).findFirst().orElseThrow(
                    () -> new AssertionError("C wrote no route trace file under " + traces()));
            List<String> lines = Files.readAllLines(file);
            assertThat(lines).as("route traces in " + file).isNotEmpty();
            return JSON.readTree(lines.getLast());
        } catch (IOException e) {
            throw new AssertionError("reading C's route traces", e);
        }
    }

    /**
     * ROUTE-6's switch rule over C's recorded predictions, with the policy's default hysteresis (the gate sets only
     * the selection mode and observations-min): gain &gt; error(F) + error(A) + hysteresis(F), and a lower
     * risk-adjusted time.
     */
    static boolean switchRuleHolds(JsonNode t) {
        double fixedMean = t.get("fixed_mean_ns").asDouble();
        double fixedError = t.get("fixed_error_ns").asDouble();
        double altMean = t.get("alternative_mean_ns").asDouble();
        double altError = t.get("alternative_error_ns").asDouble();
        double hysteresis = Math.max(RoutePolicy.HYSTERESIS_MIN_NANOS_DEFAULT, RoutePolicy.HYSTERESIS_FRACTION_DEFAULT * fixedMean);
        double fixedRisk = (fixedMean + fixedError) / t.get("fixed_success").asDouble();
        double altRisk = (altMean + altError) / t.get("alternative_success").asDouble();
        return fixedMean - altMean > fixedError + altError + hysteresis && altRisk < fixedRisk;
    }

    private static String margins(JsonNode t) {
        double fixedMean = t.get("fixed_mean_ns").asDouble();
        return String.format("fixed %.1f±%.1f ms, alternative %.1f±%.1f ms, gain %.1f ms vs margin %.1f ms", fixedMean / 1e6,
                t.get("fixed_error_ns").asDouble() / 1e6, t.get("alternative_mean_ns").asDouble() / 1e6,
                t.get("alternative_error_ns").asDouble() / 1e6, (fixedMean - t.get("alternative_mean_ns").asDouble()) / 1e6,
                (t.get("fixed_error_ns").asDouble() + t.get("alternative_error_ns").asDouble()
                        + Math.max(RoutePolicy.HYSTERESIS_MIN_NANOS_DEFAULT, RoutePolicy.HYSTERESIS_FRACTION_DEFAULT * fixedMean)) / 1e6);
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
        // B's 32nd success: both classes are sampled. Every decision from here is the switch rule applied to what C
        // recorded (exactly, from its trace); the gain (≈ 500 ms) normally clears errors plus hysteresis at once.
        int switchedAfter = -1;
        String switchTrace = null;
        List<String> withinMargin = new ArrayList<>();
        for (int round = 0; round < SWITCH_ROUNDS_MAX && switchedAfter < 0; round++) {
            assertThat(restore(key(2), onlyB)[0]).isEqualTo(FROM_B);
            bSeen++;
            String[] r = restore(key(1), shared);
            JsonNode t = lastTrace();
            boolean rule = switchRuleHolds(t);
            assertThat(t.get("decision").asText()).as("round %d, A %d, B %d: the decision is the switch rule over C's recorded "
                    + "predictions (%s)", round, aSeen, bSeen, margins(t)).isEqualTo(rule ? "switch" : "within-margin");
            assertThat(t.get("alternative_executed").asBoolean()).as("executed iff switched; trace %s", r[1]).isEqualTo(rule);
            if (rule) {
                assertThat(r[0]).isEqualTo(FROM_B);
                assertThat(r[1]).contains("sel=cost-driven:switch:executed");
                switchedAfter = bSeen;
                switchTrace = r[1] + " (" + margins(t) + ")";
            } else {
                assertThat(r[0]).isEqualTo(FROM_A);
                withinMargin.add(margins(t));
                aSeen++;
            }
        }
        System.out.println("SLOW-PEER switched with A " + aSeen + ", B " + switchedAfter + " successes; A's capped READs "
                + slowMs + " ms for the first " + OBSERVATIONS_MIN + "+1; within margin before: " + withinMargin + "; trace " + switchTrace);
        assertThat(switchedAfter).as("switched within SWITCH_ROUNDS_MAX = %d rounds after 32 on both sides; the recorded "
                + "margins kept it (machine noise in C's READ times, not a wrong decision): %s", SWITCH_ROUNDS_MAX, withinMargin)
                .isGreaterThanOrEqualTo(OBSERVATIONS_MIN);
        // and it stays switched (the slow peer is no longer chosen)
        assertThat(restore(key(1), shared)[0]).isEqualTo(FROM_B);
    }
}
