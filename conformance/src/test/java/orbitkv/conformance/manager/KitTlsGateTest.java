package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import orbitkv.testing.Await;
import orbitkv.testing.TestCerts;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.etcd.EtcdRuntimeSelection;
import orbitkv.conformance.session.KitBlackBoxTest;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.EtcdTls;
import orbitkv.membership.MembershipAdmin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Issue 33 acceptance, "the conformance kit passes against a TLS-configured cluster": three real Manager processes
 * with peer mutual TLS ({@code --peer-tls-*}, each certificate naming its node) on an etcd that requires TLS client
 * certificates ({@code --etcd-ca-file}, ...), and {@code orbitkv conformance} as its own process with
 * {@code --peer-tls-dir} (one certificate per kit member) and {@code --etcd-ca}. The verdicts must be exactly the
 * plaintext gate's ({@link KitBlackBoxTest#assertKitAgreesWithInProcess}): the same target configuration, the same
 * rows, the same agreement with the in-process runners.
 */
@Tag("gate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KitTlsGateTest {
    private static final Duration BOUND = Duration.ofSeconds(60);
    /** As in the plaintext gate: Manager a's --source-sessions-max, so source/session_limit runs (BND-3). */
    private static final int SOURCE_SESSIONS_MAX = 6;
    private static final String PREFIX = "orbitkv-kit";
    private static final long IDLE_LIVENESS_MS = 1000;

    private final String cluster = "kit-tls-" + UUID.randomUUID().toString().substring(0, 8);
    private Path work;
    private Path pki;
    private Path ca;
    private Process etcd;
    private URI etcdUrl;
    private final List<ManagerProcess> managers = new ArrayList<>();

    @BeforeAll
    void startCluster() throws Exception {
        work = Files.createTempDirectory("orbitkv-kit-tls-");
        pki = Files.createDirectories(work.resolve("pki"));
        TestCerts certs = new TestCerts(pki);
        ca = certs.ca("cluster-ca");
        certs.leaf("etcd-server", "cluster-ca", null);
        certs.leaf("etcd-client", "cluster-ca", null);
        // the kit's members: one certificate per node id it speaks as, named <node-id>.pem/.key (--peer-tls-dir)
        for (String node : kitNodeIds()) {
            certs.leaf(node, "cluster-ca", node);
        }
        startEtcd();
        EtcdEndpoints endpoints = new EtcdEndpoints(List.of(etcdUrl), Optional.of(new EtcdTls(ca, pki.resolve("etcd-client.pem"),
                pki.resolve("etcd-client.key"))));
        try (MembershipAdmin admin = MembershipAdmin.connect(endpoints, cluster, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            assertThat(admin.format()).isInstanceOf(MembershipAdmin.Formatted.class);
        }
        for (String node : List.of("a", "b", "c")) {
            Path[] leaf = certs.leaf("peer-" + node, "cluster-ca", node);
            List<String> args = ManagerProcess.distributedArgs(cluster, node, etcdUrl.toString(),
                    Files.createDirectories(work.resolve("dram-" + node)), "--dram", "32MiB", "--block-bytes-max", "1MiB",
                    // ManagerProcess.LOAD_TOLERANT_LEASE; liveness at its 1 s default: a TLS session's handshake and
                    // bootstrap must fit in 3 intervals on a loaded machine, or the session is replaced again and again
                    "--lease-ttl-ms", "8000", "--fence-safety-margin-ms", "2000", "--renewal-interval-ms", "500",
                    "--etcd-call-timeout-ms", "2000", "--idle-liveness-ms", Long.toString(IDLE_LIVENESS_MS), "--peer-tls-cert-file", leaf[0].toString(), "--peer-tls-key-file",
                    leaf[1].toString(), "--peer-tls-ca-file", ca.toString());
            args.addAll(etcdTlsArgs("--etcd-ca-file", "--etcd-cert-file", "--etcd-key-file"));
            if (node.equals("a")) { // the target, configured as in the plaintext gate
                args.addAll(List.of("--source-sessions-max", Integer.toString(SOURCE_SESSIONS_MAX), "--heal-backoff-min-ms", "3000"));
            }
            if (node.equals("c")) {
                args.addAll(List.of("--metadata-namespace", "ns-c"));
            }
            managers.add(ManagerProcess.launch("tls-" + node, work.resolve("logs"), args));
        }
        managers.forEach(ManagerProcess::awaitReady);
    }

    /** The kit's node ids under --member-prefix orbitkv-kit: src, req-1..limit+1, req-unregistered. */
    private static List<String> kitNodeIds() {
        List<String> ids = new ArrayList<>(List.of(PREFIX + "-src", PREFIX + "-req-unregistered"));
        for (int i = 1; i <= SOURCE_SESSIONS_MAX + 1; i++) {
            ids.add(PREFIX + "-req-" + i);
        }
        return ids;
    }

    private List<String> etcdTlsArgs(String caOption, String certOption, String keyOption) {
        return List.of(caOption, ca.toString(), certOption, pki.resolve("etcd-client.pem").toString(), keyOption,
                pki.resolve("etcd-client.key").toString());
    }

    private void startEtcd() throws Exception {
        Path binary = switch (EtcdRuntimeSelection.select()) {
            case EtcdRuntimeSelection.Selection.LocalBinary b -> b.etcd();
            default -> throw new AssertionError("the TLS kit gate runs the local etcd binary (Debian's etcd-server)");
        };
        int[] ports = EtcdFixture.freeLoopbackPorts(2);
        etcdUrl = URI.create("https://127.0.0.1:" + ports[0]);
        Path log = work.resolve("etcd.log");
        etcd = new ProcessBuilder(binary.toString(), "--name", "kit-tls", "--data-dir", work.resolve("etcd-data").toString(),
                "--listen-client-urls", etcdUrl.toString(), "--advertise-client-urls", etcdUrl.toString(),
                "--listen-peer-urls", "http://127.0.0.1:" + ports[1], "--initial-advertise-peer-urls", "http://127.0.0.1:" + ports[1],
                "--initial-cluster", "kit-tls=http://127.0.0.1:" + ports[1],
                "--cert-file", pki.resolve("etcd-server.pem").toString(), "--key-file", pki.resolve("etcd-server.key").toString(),
                "--trusted-ca-file", ca.toString(), "--client-cert-auth")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        Await.until("etcd over TLS healthy (log " + log + ")", BOUND, () -> {
            if (!etcd.isAlive()) {
                throw new AssertionError("etcd exited; its log is " + log);
            }
            return etcdctl("endpoint", "health").contains("is healthy");
        });
    }

    /** {@code etcdctl} over TLS with the client certificate; its output, or "" when it failed. */
    private String etcdctl(String... args) {
        try {
            return run(args);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private String run(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("etcdctl", "--endpoints=" + etcdUrl, "--cacert=" + ca,
                "--cert=" + pki.resolve("etcd-client.pem"), "--key=" + pki.resolve("etcd-client.key"), "--command-timeout=10s"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0 ? out : "";
    }

    @AfterAll
    void stopCluster() throws Exception {
        managers.forEach(ManagerProcess::close);
        if (etcd != null) {
            etcd.destroyForcibly();
            etcd.waitFor(10, TimeUnit.SECONDS);
        }
        if (!Boolean.getBoolean("orbitkv.keepWork")) {
            ManagerProcess.deleteTree(work);
        }
    }

    @Test
    @DisplayName("issue 33 acceptance BND-3 INV-7 SES-4 SES-5 SES-6 SES-13 DELTA-9: orbitkv conformance over peer mutual TLS (a certificate per kit "
            + "member) and etcd TLS against three peer-mTLS Managers gives the plaintext gate's verdicts")
    void kitPassesAgainstTlsCluster() throws Exception {
        ManagerProcess a = managers.getFirst();
        Path report = work.resolve("conformance-report.xml");
        List<String> args = new ArrayList<>(List.of("--target-peer", a.peer(), "--target-http", a.httpBase(),
                "--etcd", etcdUrl.toString(), "--cluster", cluster, "--listen", "127.0.0.1:0", "--report", report.toString(),
                "--no-skip-policy", "--target-idle-liveness-ms", Long.toString(IDLE_LIVENESS_MS), "--allow-fencing",
                "--target-source-sessions-max", Integer.toString(SOURCE_SESSIONS_MAX),
                "--member-prefix", PREFIX, "--peer-tls-dir", pki.toString(), "--peer-tls-ca-file", ca.toString()));
        args.addAll(etcdTlsArgs("--etcd-ca", "--etcd-cert", "--etcd-key"));
        ManagerProcess kit = ManagerProcess.launchModule("kit-tls", work.resolve("logs"),
                "orbitkv.conformance/orbitkv.conformance.kit.ConformanceCommand", args);
        KitBlackBoxTest.assertKitAgreesWithInProcess(kit, report);
        assertThat(kit.stdoutText()).as("the kit ran over peer TLS").contains("peer mutual TLS");
        Await.until("the kit deregistered its members (three Managers' records remain)", BOUND,
                () -> etcdctl("get", "--prefix", "--keys-only", "/orbitkv/v2/" + cluster + "/members/").lines()
                        .filter(l -> !l.isBlank()).count() == 3);
    }
}
