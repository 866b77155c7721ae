package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import orbitkv.conformance.etcd.Await;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.membership.MembershipAdmin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 20 item 9 on real Manager processes: peer mutual TLS (both InventorySession directions over it; a
 * client without a certificate or without TLS is refused by the listener), the bearer token of the mutating
 * HTTP endpoints (read from a file, not on the command line), and the etcd TLS options validated before etcd
 * is contacted. Throwaway certificates come from the {@code openssl} command line in a temporary directory.
 */
@Tag("gate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ManagerSecurityGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final Duration BOUND = Duration.ofSeconds(30);

    private Path work;
    private TestCerts certs;
    private Path ca;
    private final List<ManagerProcess> all = new ArrayList<>();

    @BeforeAll
    void setUp() throws Exception {
        work = Files.createTempDirectory("orbitkv-security-gate-");
        certs = new TestCerts(Files.createDirectories(work.resolve("pki")));
        ca = certs.ca("cluster-ca");
    }

    @AfterAll
    void tearDown() throws IOException {
        all.forEach(ManagerProcess::close);
        ManagerProcess.deleteTree(work);
    }

    private ManagerProcess launch(String name, List<String> args) throws IOException {
        ManagerProcess m = ManagerProcess.launch(name, work.resolve("logs"), args);
        all.add(m);
        return m;
    }

    private Path dram(String name) throws IOException {
        return Files.createDirectories(work.resolve("dram-" + name));
    }

    @Test
    @DisplayName("OPS-5 SES-1 issue 20.9: with --peer-tls-* two Managers' InventorySessions run over mutual TLS (await and query across them); the listener refuses a client without a certificate and a plaintext one")
    void peerMutualTls() throws Exception {
        String cluster = "tls-" + UUID.randomUUID().toString().substring(0, 8);
        try (MembershipAdmin admin = MembershipAdmin.connect(ETCD.endpoints(), cluster, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            assertThat(admin.format()).isInstanceOf(MembershipAdmin.Formatted.class);
        }
        Map<String, ManagerProcess> nodes = new LinkedHashMap<>();
        for (String node : List.of("a", "b")) {
            Path[] leaf = certs.leaf("peer-" + node, "cluster-ca");
            nodes.put(node, launch("tls-" + node, ManagerProcess.distributedArgs(cluster, node, ETCD.endpoints().toString(),
                    dram("tls-" + node), "--dram", "16MiB", "--block-bytes-max", "1MiB",
                    // ManagerProcess.LOAD_TOLERANT_LEASE
                    "--lease-ttl-ms", "8000", "--fence-safety-margin-ms", "2000", "--renewal-interval-ms", "500",
                    "--etcd-call-timeout-ms", "2000", "--idle-liveness-ms", "500", "--freshness-budget-ms", "2000",
                    "--peer-tls-cert-file", leaf[0].toString(), "--peer-tls-key-file", leaf[1].toString(),
                    "--peer-tls-ca-file", ca.toString())));
        }
        ManagerProcess a = nodes.get("a");
        ManagerProcess b = nodes.get("b");
        a.awaitReady();
        b.awaitReady();
        ManagerApi apiA = new ManagerApi(a.httpBase());
        ManagerApi apiB = new ManagerApi(b.httpBase());
        String key = String.format("%064x", 0x7150);
        assertThat(apiA.save("tls", Map.of(key, ManagerApi.payload(1, 0, 512))).status()).isEqualTo(200);
        ManagerApi.Reply sync = apiA.sync();
        assertThat(sync.status()).as(sync.text()).isEqualTo(200);
        JsonNode fence = sync.json().get("inventory_fence");
        String digest = apiB.status().at("/scope/digest").asText();
        ManagerApi.Reply awaited = apiB.await(fence, digest, 20_000);
        assertThat(awaited.status()).as("B installs A's view over the TLS session: " + awaited.text()).isEqualTo(200);
        JsonNode q = apiB.query("tls", List.of(key)).json();
        assertThat(q.at("/candidates/0/replicas/0/owner/incarnation").asText()).isEqualTo(a.incarnation());
        Await.until("A's session to B is established too", BOUND,
                () -> apiA.status().at("/sessions/requester/0/installs").asLong() >= 1);

        URI peer = URI.create("tcp://" + a.peer());
        try (SSLSocket s = (SSLSocket) trustingContext().getSocketFactory().createSocket(peer.getHost(), peer.getPort())) {
            s.setSoTimeout(10_000);
            SSLParameters p = s.getSSLParameters();
            p.setProtocols(new String[] {"TLSv1.3"});
            p.setApplicationProtocols(new String[] {"h2"});
            s.setSSLParameters(p);
            s.startHandshake(); // TLS 1.3: the missing client certificate is refused with the first read
            assertThatThrownBy(() -> s.getInputStream().read()).as("no client certificate").isInstanceOf(IOException.class);
        }
        try (Socket plain = new Socket(peer.getHost(), peer.getPort())) {
            plain.setSoTimeout(10_000);
            plain.getOutputStream().write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            byte[] answer = plain.getInputStream().readNBytes(64);
            assertThat(answer.length == 0 || (answer[0] == 0x15 || answer[0] == 0x16))
                    .as("a plaintext HTTP/2 client gets no HTTP/2 answer (closed or a TLS record)").isTrue();
        } catch (IOException e) {
            // reset by the TLS listener: refused as well
        }
        assertThat(a.stderrText() + a.stdoutText()).doesNotContain("in plaintext (trusted cluster)");
    }

    @Test
    @DisplayName("OPS-5 issue 20.9: --http-token-file: save/evict/sync/await need 'Authorization: Bearer', reads do not; the token is not on the command line")
    void bearerToken() throws Exception {
        String token = "gate-token-" + UUID.randomUUID();
        Path file = work.resolve("http.token");
        Files.writeString(file, token + "\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        ManagerProcess m = launch("token", List.of("manager", "--standalone", "--http-listen", "127.0.0.1:0",
                "--dram", "8MiB", "--block-bytes-max", "1MiB", "--dram-dir", dram("token").toString(),
                "--http-token-file", file.toString()));
        m.awaitReady();
        ManagerApi api = new ManagerApi(m.httpBase());
        ManagerApi.Reply refused = api.save("tok", Map.of("aa", ManagerApi.payload(1, 0, 64)));
        assertThat(refused.status()).isEqualTo(401);
        assertThat(refused.json().at("/error/code").asText()).isEqualTo("UNAUTHORIZED");
        assertThat(refused.header("WWW-Authenticate")).startsWith("Bearer");
        assertThat(api.evict("tok", List.of("aa"), "ALL").status()).isEqualTo(401);
        assertThat(api.sync().status()).isEqualTo(401);
        assertThat(api.health().at("/tiers/0/blocks").asLong()).isZero();
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpResponse<String> saved = client.send(HttpRequest.newBuilder(URI.create(m.httpBase() + "/cache/save?namespace=tok"))
                .header("Content-Type", ManagerApi.BLOCKS).header("Authorization", "Bearer " + token)
                .POST(HttpRequest.BodyPublishers.ofByteArray(ManagerApi.frame(Map.of("aa", ManagerApi.payload(1, 0, 64)))))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(saved.statusCode()).as(saved.body()).isEqualTo(200);
        assertThat(api.query("tok", List.of("aa")).json().get("recoverable_prefix").asInt()).as("reads stay open").isEqualTo(1);
        String commandLine = Files.readString(Path.of("/proc/" + m.pid() + "/cmdline"), java.nio.charset.StandardCharsets.ISO_8859_1)
                .replace('\0', ' '); // the whole argument vector, as `ps` shows it
        assertThat(commandLine).contains("--http-token-file " + file).doesNotContain(token);
    }

    @Test
    @DisplayName("BND-6 OPS-5 issue 20.9 / 18.3: etcd TLS options are validated before etcd is contacted, on `orbitkv manager` and `orbitkv admin`, naming the options")
    void etcdTlsOptions() throws Exception {
        String https = "https://127.0.0.1:1"; // nothing listens: only validation can answer
        List<String> base = List.of("manager", "--cluster", "c1", "--node-id", "n1", "--etcd", https,
                "--http-listen", "127.0.0.1:0", "--dram", "4MiB", "--block-bytes-max", "1MiB", "--dram-dir", dram("etcd-tls").toString());
        ManagerProcess noFiles = launch("etcd-tls-none", base);
        assertThat(noFiles.awaitExit(BOUND)).isEqualTo(2);
        assertThat(noFiles.stderrText()).contains("--etcd lists https:// endpoints: give --etcd-ca-file, --etcd-cert-file and --etcd-key-file");
        Path[] client = certs.leaf("etcd-client", "cluster-ca");
        Path notPem = Files.writeString(work.resolve("not.pem"), "not a certificate\n");
        List<String> badCa = new ArrayList<>(base);
        badCa.addAll(List.of("--etcd-ca-file", notPem.toString(), "--etcd-cert-file", client[0].toString(),
                "--etcd-key-file", client[1].toString()));
        ManagerProcess bad = launch("etcd-tls-bad-ca", badCa);
        assertThat(bad.awaitExit(BOUND)).isEqualTo(2);
        assertThat(bad.stderrText()).contains("--etcd-ca-file " + notPem + " holds no usable PEM CA certificate");
        List<String> swapped = new ArrayList<>(base);
        swapped.addAll(List.of("--etcd-ca-file", ca.toString(), "--etcd-cert-file", client[1].toString(),
                "--etcd-key-file", client[0].toString()));
        ManagerProcess keyAsCert = launch("etcd-tls-swapped", swapped);
        assertThat(keyAsCert.awaitExit(BOUND)).isEqualTo(2);
        assertThat(keyAsCert.stderrText()).contains("--etcd-cert-file " + client[1] + " and --etcd-key-file " + client[0]);
        ManagerProcess admin = launch("etcd-tls-admin", List.of("admin", "show", "--cluster", "c1", "--etcd", https,
                "--etcd-ca-file", ca.toString()));
        assertThat(admin.awaitExit(BOUND)).isEqualTo(2);
        assertThat(admin.stderrText()).contains("--etcd-cert-file and --etcd-key-file missing");
        List<String> good = new ArrayList<>(base);
        good.addAll(List.of("--etcd-ca-file", ca.toString(), "--etcd-cert-file", client[0].toString(),
                "--etcd-key-file", client[1].toString(), "--lease-ttl-ms", "2000", "--fence-safety-margin-ms", "500",
                "--renewal-interval-ms", "500", "--etcd-call-timeout-ms", "300"));
        ManagerProcess valid = launch("etcd-tls-valid", good);
        assertThat(valid.awaitExit(BOUND)).as("valid TLS settings pass validation and reach etcd (nothing listens)").isEqualTo(1);
        assertThat(valid.stderrText()).contains("etcd at " + https + " did not answer the registration");
    }

    private static SSLContext trustingContext() throws Exception {
        SSLContext c = SSLContext.getInstance("TLS");
        c.init(null, new TrustManager[] {new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {}

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) {}

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        }}, null);
        return c;
    }
}
