package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.peer.FaultProxy;
import orbitkv.conformance.peer.LinkFaults;
import orbitkv.testing.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * BND-2's transfer half with real Managers (separate processes, real etcd): S holds {@value #RESIDENCES}
 * residences; R has S's view installed; E joins later and bootstraps S's view through its own HTTP CONNECT
 * {@link FaultProxy} whose bandwidth cap keeps S's snapshot to E in progress for the whole measurement. Meanwhile R
 * restores a block from S again and again: every grant's Release must be confirmed by S (its grants and pins back
 * to zero) within {@value #RELEASE_BOUND_MS} ms of the restore's answer, while S's session to E is still
 * bootstrapping. A Release queued behind the snapshot would wait for the snapshot (far longer).
 */
@Tag("gate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReleaseUnderSnapshotGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final String NS = "ns";
    static final int RESIDENCES = 128 * 160;
    /** E's link cap: S's snapshot of {@value #RESIDENCES} residences takes far longer than the measurement. */
    private static final long CAP_BYTES_PER_SECOND = 32 << 10;
    static final long RELEASE_BOUND_MS = 2_000;
    private static final int RELEASES = 10;

    private ManagerCluster cluster;
    private ManagerProcess s;
    private ManagerProcess r;
    private ManagerProcess e;
    private FaultProxy eEgress;

    @BeforeAll
    void startCluster() throws Exception {
        cluster = ManagerCluster.format(ETCD, "bnd2");
        eEgress = cluster.own(FaultProxy.builder().listen(InetAddress.getLoopbackAddress(), 0).connectProxy().http2()
                .name("e-egress").build());
        s = launch("s", List.of(), List.of("--transfer-grant-expiry-ms", "30000"));
        r = launch("r", List.of(), List.of());
        cluster.awaitMembers();
    }

    private ManagerProcess launch(String node, List<String> jvm, List<String> extra) throws IOException {
        return cluster.launch(node, jvm, dir -> {
            List<String> args = new ArrayList<>(List.of("--dram", "64MiB", "--block-bytes-max", "1MiB",
                    "--shutdown-drain-ms", "5000", "--idle-liveness-ms", "500",
                    // small session frames and credit windows: the source serializes its snapshot page by page as
                    // credits return over the capped link, so its session stays BOOTSTRAPPING while it does
                    "--frame-encoded-bytes-max", "64KiB", "--snapshot-page-bytes-max", "32KiB", "--receive-window-bytes", "64KiB"));
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
        return String.format("%064x", 0xe00000 + i);
    }

    private static void published(ManagerProcess requester, ManagerProcess source) {
        ManagerCluster.published(requester, 20_000, source);
    }

    /** S's served sessions that have not reached STREAMING (E's bootstrap). */
    private long bootstrapping() {
        long n = 0;
        for (JsonNode session : api(s).status().at("/sessions/served")) {
            String phase = session.get("phase").asText();
            if (phase.equals("OPENING") || phase.equals("BOOTSTRAPPING")) {
                n++;
            }
        }
        return n;
    }

    private JsonNode source() {
        return api(s).status().at("/transfer/source");
    }

    @Test
    @DisplayName("BND-2 INV-8 transfer releases never queue behind snapshot serialization: while the source serves a bootstrapping requester a snapshot of 20,480 residences, another requester's grants are released and confirmed within 2 s of each restore, pins back to zero")
    void releasesConfirmedDuringSnapshot() throws Exception {
        for (int batch = 0; batch < RESIDENCES / 128; batch++) {
            Map<String, byte[]> blocks = new LinkedHashMap<>();
            for (int i = 0; i < 128; i++) {
                int n = batch * 128 + i;
                blocks.put(key(n), ManagerApi.payload(12, n, 64));
            }
            ManagerApi.Reply saved = api(s).save(NS, blocks);
            assertThat(saved.status()).as(saved.text()).isEqualTo(200);
        }
        byte[] block = ManagerApi.payload(12, 0, 64);
        published(r, s);
        ManagerApi.Reply first = api(r).restore(NS, List.of(key(0)), "tcp", 10_000);
        assertThat(first.header("X-OrbitKV-Route")).as(first.text()).isEqualTo("r=1 stop=complete routes=peer-dram@s/1[0,1):ready+tcp");

        eEgress.faults(s.peer(), LinkFaults.NONE.withBandwidth(CAP_BYTES_PER_SECOND)); // e -> s only
        e = launch("e", List.of("-Dhttps.proxyHost=" + eEgress.endpoint().host(),
                "-Dhttps.proxyPort=" + eEgress.endpoint().port(), "-Dhttp.nonProxyHosts="), List.of());
        e.awaitReady();
        try {
            Await.until("s serves e's bootstrap", BOUND, () -> bootstrapping() >= 1);
        } catch (AssertionError x) {
            throw new AssertionError(x.getMessage() + "; s's served sessions " + api(s).status().at("/sessions/served")
                    + "; e's links " + eEgress.allStats(), x);
        }

        List<Long> releaseMs = new ArrayList<>();
        for (int i = 0; i < RELEASES; i++) {
            long confirmed = api(r).status().at("/transfer/requester/releases_confirmed").asLong();
            // Shared memory: a grant READ whole over TCP ends at its source's last send with no Release call (issue 37
            // item 5, release after the last READ); the source never sees a shared-memory READ, so this grant is
            // released by the Release call this test times.
            ManagerApi.Reply reply = api(r).restore(NS, List.of(key(0)), "shared-memory-preferred", 10_000);
            long t0 = System.nanoTime();
            assertThat(reply.header("X-OrbitKV-Route")).isEqualTo("r=1 stop=complete routes=peer-dram@s/1[0,1):ready+shm");
            assertThat(ManagerApi.unframe(reply.body()).get(key(0))).isEqualTo(block);
            Await.until("release " + i + " confirmed and s holds no grant", Duration.ofMillis(RELEASE_BOUND_MS * 5), () -> {
                JsonNode src = source();
                return api(r).status().at("/transfer/requester/releases_confirmed").asLong() == confirmed + 1
                        && src.get("grants_outstanding").asLong() == 0 && src.get("pins_held").asLong() == 0;
            });
            releaseMs.add((System.nanoTime() - t0) / 1_000_000);
        }
        long stillBootstrapping = bootstrapping();
        System.out.println("BND-2 releases confirmed after the restore's answer (ms, includes status polling): " + releaseMs
                + "; snapshot still in progress: " + (stillBootstrapping >= 1));
        assertThat(stillBootstrapping).as("the snapshot to e lasted through every release").isGreaterThanOrEqualTo(1);
        assertThat(releaseMs).allSatisfy(ms -> assertThat(ms).isLessThanOrEqualTo(RELEASE_BOUND_MS));
        assertThat(source().at("/grants_ended/expired").asLong()).as("released, not expired").isZero();

        eEgress.faults(s.peer(), null);
        Await.until("e's bootstrap of s ends once the cap is lifted", Duration.ofSeconds(60), () -> bootstrapping() == 0);
    }
}
