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
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.membership.MembershipAdmin;
import orbitkv.testing.Await;
import orbitkv.testing.TestCerts;
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

    /** The two-Manager mutual-TLS cluster the peer TLS tests share, started once. */
    private Map<String, ManagerProcess> tlsNodes;
    private final Map<String, Path[]> tlsLeaves = new LinkedHashMap<>();

    private synchronized Map<String, ManagerProcess> tlsCluster() throws Exception {
        if (tlsNodes != null) {
            return tlsNodes;
        }
        String cluster = "tls-" + UUID.randomUUID().toString().substring(0, 8);
        try (MembershipAdmin admin = MembershipAdmin.connect(ETCD.endpoints(), cluster, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            assertThat(admin.format()).isInstanceOf(MembershipAdmin.Formatted.class);
        }
        Map<String, ManagerProcess> nodes = new LinkedHashMap<>();
        for (String node : List.of("a", "b")) {
            Path[] leaf = certs.leaf("peer-" + node, "cluster-ca", node); // issue 33: the certificate names the node
            tlsLeaves.put(node, leaf);
            nodes.put(node, launch("tls-" + node, ManagerProcess.distributedArgs(cluster, node, ETCD.endpoints().toString(),
                    dram("tls-" + node), "--dram", "16MiB", "--block-bytes-max", "1MiB",
                    // ManagerProcess.LOAD_TOLERANT_LEASE
                    "--lease-ttl-ms", "8000", "--fence-safety-margin-ms", "2000", "--renewal-interval-ms", "500",
                    "--etcd-call-timeout-ms", "2000", "--idle-liveness-ms", "500", "--freshness-budget-ms", "2000",
                    "--peer-tls-cert-file", leaf[0].toString(), "--peer-tls-key-file", leaf[1].toString(),
                    "--peer-tls-ca-file", ca.toString())));
        }
        nodes.values().forEach(ManagerProcess::awaitReady);
        tlsNodes = nodes;
        return nodes;
    }

    @Test
    @DisplayName("OPS-5 SES-1 issue 20.9: with --peer-tls-* two Managers' InventorySessions run over mutual TLS (await and query across them); the listener refuses a client without a certificate and a plaintext one")
    void peerMutualTls() throws Exception {
        Map<String, ManagerProcess> nodes = tlsCluster();
        ManagerProcess a = nodes.get("a");
        ManagerProcess b = nodes.get("b");
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
    @DisplayName("issue 33 the data channel is plaintext and unauthenticated under peer mTLS: a peer restore crosses the TLS data channel; a plaintext READ and a TLS client without a certificate get no byte from the data port")
    void dataChannelPlaintextUnderPeerMtls() throws Exception {
        Map<String, ManagerProcess> nodes = tlsCluster();
        ManagerProcess a = nodes.get("a");
        ManagerApi apiA = new ManagerApi(a.httpBase());
        ManagerApi apiB = new ManagerApi(nodes.get("b").httpBase());
        String key = String.format("%064x", 0x7151);
        byte[] payload = ManagerApi.payload(1, 0, 256 << 10);
        assertThat(apiA.save("tls-data", Map.of(key, payload)).status()).isEqualTo(200);
        ManagerApi.Reply sync = apiA.sync();
        assertThat(sync.status()).as(sync.text()).isEqualTo(200);
        ManagerApi.Reply awaited = apiB.await(sync.json().get("inventory_fence"), apiB.status().at("/scope/digest").asText(), 20_000);
        assertThat(awaited.status()).as(awaited.text()).isEqualTo(200);
        ManagerApi.Reply restored = apiB.restore("tls-data", List.of(key), "tcp", 20_000);
        assertThat(restored.status()).as(restored.text()).isEqualTo(200);
        assertThat(restored.header("X-OrbitKV-Route")).contains("peer-dram@a").contains("+tcp");
        assertThat(ManagerApi.unframe(restored.body()).get(key)).as("the bytes crossed the TLS data channel").isEqualTo(payload);

        URI data = URI.create("tcp://" + apiA.status().at("/transfer/source/data_endpoint").asText());
        try (Socket plain = new Socket(data.getHost(), data.getPort())) {
            plain.setSoTimeout(20_000);
            byte[] read = new byte[40]; // a READ frame: magic OKVT, version 1, type 1, then a grant id nobody holds
            java.nio.ByteBuffer.wrap(read).putInt(0x4F4B5654).put((byte) 1).put((byte) 1);
            plain.getOutputStream().write(read);
            byte[] answer = readUntilClosed(plain);
            assertThat(answer.length < 32 || answer[0] != 'O').as("no data channel answer in plaintext, got "
                    + answer.length + " bytes").isTrue();
        }
        try (SSLSocket s = (SSLSocket) trustingContext().getSocketFactory().createSocket(data.getHost(), data.getPort())) {
            s.setSoTimeout(20_000);
            SSLParameters p = s.getSSLParameters();
            p.setProtocols(new String[] {"TLSv1.3"});
            s.setSSLParameters(p);
            s.startHandshake(); // TLS 1.3: the missing client certificate is refused with the first read
            assertThatThrownBy(() -> {
                s.getOutputStream().write(new byte[40]);
                if (s.getInputStream().read() < 0) {
                    throw new IOException("closed");
                }
            }).as("no client certificate").isInstanceOf(IOException.class);
        }
        assertThat(apiA.status().at("/transfer/source/reads_served/peer-dram").asLong()).as("only B's TLS READ")
                .isEqualTo(1);
    }

    @Test
    @DisplayName("issue 33 any certificate from the cluster CA can pose as any member: Authorize with a CA-signed certificate of node 'intruder' claiming member b is REQUESTER_IDENTITY_MISMATCH; b's own certificate is served; a certificate not naming --node-id refuses the start")
    void anyCertificateFromClusterCaCanPoseAsAnyMember() throws Exception {
        Map<String, ManagerProcess> nodes = tlsCluster();
        ManagerProcess a = nodes.get("a");
        ManagerProcess b = nodes.get("b");
        Path[] intruder = certs.leaf("intruder", "cluster-ca", "intruder");
        orbitkv.transfer.wire.AuthorizeRequest posing = authorizeAs(b.incarnation(), a.incarnation());
        orbitkv.transfer.wire.AuthorizeResponse refused = authorize(a, intruder, posing);
        assertThat(refused.getRefused().getReason()).as(refused.toString())
                .isEqualTo(orbitkv.transfer.wire.RefusalReason.REQUESTER_IDENTITY_MISMATCH);
        assertThat(refused.getRefused().getDetail()).contains("intruder");
        orbitkv.transfer.wire.AuthorizeResponse own = authorize(a, tlsLeaves.get("b"), posing);
        assertThat(own.hasAuthorized()).as("b's own certificate: " + own).isTrue();
        assertThat(new ManagerApi(a.httpBase()).status().at("/transfer/source/refusals/requester_identity_mismatch")
                .asLong()).isGreaterThanOrEqualTo(1);

        Path[] other = certs.leaf("peer-x", "cluster-ca", "x");
        ManagerProcess wrong = launch("tls-wrong-node", List.of("manager", "--cluster", "c1", "--node-id", "y",
                "--etcd", ETCD.endpoints().toString(), "--http-listen", "127.0.0.1:0", "--dram", "4MiB",
                "--block-bytes-max", "1MiB", "--dram-dir", dram("tls-wrong-node").toString(),
                "--peer-tls-cert-file", other[0].toString(), "--peer-tls-key-file", other[1].toString(),
                "--peer-tls-ca-file", ca.toString()));
        assertThat(wrong.awaitExit(BOUND)).isEqualTo(2);
        assertThat(wrong.stderrText()).contains("--peer-tls-cert-file " + other[0] + " names node x")
                .contains("--node-id is y");
    }

    /** A well-formed Authorize of one DRAM block claiming {@code requester} ("node/epoch/uuid") toward {@code source}. */
    private static orbitkv.transfer.wire.AuthorizeRequest authorizeAs(String requester, String source) {
        orbitkv.transfer.wire.AuthorizeRequest.Builder r = orbitkv.transfer.wire.AuthorizeRequest.newBuilder()
                .setProtocol("orbitkv/transfer/v1").setRequester(ref(requester)).setSource(ref(source))
                .setIntent(orbitkv.transfer.wire.Intent.INTENT_FOREGROUND);
        r.addBlocksBuilder().setNamespace(com.google.protobuf.ByteString.copyFromUtf8("tls"))
                .setKey(com.google.protobuf.ByteString.copyFrom(java.util.HexFormat.of().parseHex(String.format("%064x", 0x7150))))
                .setMedium(orbitkv.transfer.wire.Medium.MEDIUM_DRAM).setResidencySequence(1);
        return r.build();
    }

    private static orbitkv.transfer.wire.IncarnationRef ref(String incarnation) {
        String[] p = incarnation.split("/");
        UUID id = UUID.fromString(p[2]);
        return orbitkv.transfer.wire.IncarnationRef.newBuilder().setNodeId(p[0]).setNodeEpoch(Long.parseLong(p[1]))
                .setId(orbitkv.transfer.wire.Uuid.newBuilder().setMsb(id.getMostSignificantBits())
                        .setLsb(id.getLeastSignificantBits())).build();
    }

    /** Sends {@code request} (with {@code to}'s cluster UUID) to {@code to}'s peer listener presenting {@code leaf}. */
    private orbitkv.transfer.wire.AuthorizeResponse authorize(ManagerProcess to, Path[] leaf,
            orbitkv.transfer.wire.AuthorizeRequest request) throws Exception {
        URI peer = URI.create("tcp://" + to.peer());
        io.grpc.ManagedChannel ch = io.grpc.netty.NettyChannelBuilder.forAddress(peer.getHost(), peer.getPort())
                .sslContext(io.grpc.netty.GrpcSslContexts.forClient().trustManager(ca.toFile())
                        .keyManager(leaf[0].toFile(), leaf[1].toFile()).build()).build();
        try {
            UUID cluster = UUID.fromString(new ManagerApi(to.httpBase()).status().at("/cluster/uuid").asText());
            return orbitkv.transfer.wire.TransferAuthorizationGrpc.newBlockingStub(ch)
                    .withDeadlineAfter(20, java.util.concurrent.TimeUnit.SECONDS)
                    .authorize(request.toBuilder().setClusterUuid(orbitkv.transfer.wire.Uuid.newBuilder()
                            .setMsb(cluster.getMostSignificantBits()).setLsb(cluster.getLeastSignificantBits())).build());
        } finally {
            ch.shutdownNow();
        }
    }

    private static byte[] readUntilClosed(Socket s) {
        java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
        byte[] b = new byte[4096];
        try {
            int n;
            while ((n = s.getInputStream().read(b)) >= 0) {
                got.write(b, 0, n);
            }
        } catch (IOException reset) {
            // reset or a TLS alert then close: refused as well
        }
        return got.toByteArray();
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
