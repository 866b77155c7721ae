package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import orbitkv.server.incarnation.StandaloneMetadata;
import orbitkv.inventory.Scope;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.server.config.BearerToken;
import orbitkv.server.config.ListenAddress;
import orbitkv.server.net.NativeTransport;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import orbitkv.testing.RawConnection;
import orbitkv.testing.RawHttp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import orbitkv.server.api.BlockFraming;

/**
 * Issue 33 (security and resource safety on every port), the HTTP API's findings, over real sockets against a
 * standalone Manager's HTTP API: the read token, duplicate Authorization headers, the endpoint label of 401s,
 * the range message of an out-of-range {@code deadline_ms}, and the per-client body allowance. Each test is
 * named after its finding and fails on the code before the fix.
 */
@Tag("unit")
class HttpSecurityTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final String WRITER = "writer-token-0123456789";
    private static final String READER = "reader-token-0123456789";

    @TempDir
    Path dir;

    private LocalTiers tiers;
    private HttpApiServer server;

    private InetSocketAddress start(HttpLimits limits) throws Exception {
        ResidencySequence sequence = new ResidencySequence();
        tiers = new LocalTiers(DramTier.open(dir, 4 << 20, 64, sequence), null, sequence);
        server = HttpApiServer.start(new ListenAddress("127.0.0.1", 0), NativeTransport.detect(), tiers,
                new StandaloneMetadata(null, Incarnation.random(new NodeId("n1"), new NodeEpoch(1)), Scope.all()), limits);
        return server.boundAddress();
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
        if (tiers != null) {
            tiers.close();
        }
    }

    private BearerToken token(String name, String text) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, text + "\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return BearerToken.read(file);
    }

    /** The limits of the token tests: a write token and a read token. */
    private HttpLimits withTokens() throws IOException {
        return TestLimits.small().withToken(token("write", WRITER)).withReadToken(token("read", READER));
    }

    /** One record {@code u16 1 | key | u32 n | n bytes}. */
    private static byte[] record(int key, int payloadBytes) {
        return ByteBuffer.allocate(7 + payloadBytes).putShort((short) 1).put((byte) key).putInt(payloadBytes).array();
    }

    /** One request with {@code headers} (each ending in CRLF) and a body; reads one answer. */
    private static RawHttp.Response send(InetSocketAddress address, String method, String path, String headers, byte[] body)
            throws IOException {
        try (RawConnection c = new RawConnection(address)) {
            c.write(method + " " + path + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n" + headers
                    + (body == null ? "" : "Content-Length: " + body.length + "\r\n") + "\r\n");
            if (body != null) {
                c.write(body);
            }
            return c.read();
        }
    }

    private static String auth(String token) {
        return token == null ? "" : "Authorization: Bearer " + token + "\r\n";
    }

    private static String code(RawHttp.Response r) throws IOException {
        return JSON.readTree(r.body()).at("/error/code").asText();
    }

    private static String message(RawHttp.Response r) throws IOException {
        return JSON.readTree(r.body()).at("/error/message").asText();
    }

    private String metrics() throws IOException {
        return new RawHttp(server.boundAddress()).get("/metrics").text();
    }

    private long blocks() throws IOException {
        return JSON.readTree(new RawHttp(server.boundAddress()).get("/health").body()).at("/tiers/0/blocks").asLong();
    }

    private void awaitMetric(String line) throws Exception {
        long until = System.nanoTime() + BOUND.toNanos();
        while (!metrics().contains(line)) {
            assertThat(System.nanoTime() - until).as("metric line %s within %s", line, BOUND).isNegative();
            Thread.onSpinWait();
        }
    }

    /** A read call of each reading endpoint: method, path, content type header, body. */
    private record Call(String method, String path, String headers, byte[] body) {
        RawHttp.Response send(InetSocketAddress address, String token) throws IOException {
            return HttpSecurityTest.send(address, method, path, headers + auth(token), body);
        }
    }

    private static List<Call> readCalls() {
        byte[] keys = "{\"namespace\": \"m\", \"keys\": [\"11\"]}".getBytes(StandardCharsets.UTF_8);
        String json = "Content-Type: application/json\r\n";
        return List.of(new Call("POST", "/cache/query", json, keys), new Call("POST", "/cache/restore", json, keys),
                new Call("GET", "/cache/metadata/status", "", null), new Call("GET", "/cache/metadata/routes", "", null),
                new Call("GET", "/cache/metadata/residences", "", null));
    }

    // ------------------------------------------------------------------ the read token

    /** The status of an admitted read here: residences has no source inventory to list in this unit setup. */
    private static int expectedOpen(Call call) {
        return call.path().equals("/cache/metadata/residences") ? 503 : 200;
    }

    @Test
    @DisplayName("OPS-5 issue 33: restore and query need no token, so anyone who reaches the HTTP port reads every cached"
            + " prompt -> with --http-read-token-file, query, restore, status, routes and residences answer 401 without"
            + " the read or the write token; /health and /metrics stay open; the read token cannot write")
    void restoreAndQueryNeedNoTokenSoAnyoneReadsEveryCachedPrompt() throws Exception {
        InetSocketAddress address = start(withTokens());
        String blocksType = "Content-Type: " + BlockFraming.CONTENT_TYPE + "\r\n";
        RawHttp.Response saved = send(address, "POST", "/cache/save?namespace=m", blocksType + auth(WRITER), record(0x11, 5));
        assertThat(saved.status()).as(saved.text()).isEqualTo(200);

        for (Call call : readCalls()) {
            for (String wrong : Arrays.asList(null, "reader-token-0123456788", "")) {
                RawHttp.Response r = call.send(address, wrong);
                assertThat(r.status()).as("%s with %s", call.path(), wrong).isEqualTo(401);
                assertThat(code(r)).isEqualTo("UNAUTHORIZED");
                assertThat(r.header("www-authenticate")).startsWith("Bearer");
                assertThat(r.text()).doesNotContain("\"11\"");
            }
            for (String right : List.of(READER, WRITER)) {
                RawHttp.Response r = call.send(address, right);
                assertThat(r.status()).as("%s with the %s token: %s", call.path(), right, r.text())
                        .isEqualTo(expectedOpen(call));
            }
        }
        RawHttp.Response restored = readCalls().get(1).send(address, READER);
        assertThat(restored.header(CacheApi.RESTORED_HEADER)).as("the read token reads the bytes").isEqualTo("1");

        RawHttp.Response readerSaves = send(address, "POST", "/cache/save?namespace=m", blocksType + auth(READER),
                record(0x22, 5));
        assertThat(readerSaves.status()).as("the read token does not write").isEqualTo(401);
        assertThat(send(address, "POST", "/cache/evict", "Content-Type: application/json\r\n" + auth(READER),
                "{\"namespace\": \"m\", \"keys\": [\"11\"]}".getBytes(StandardCharsets.UTF_8)).status()).isEqualTo(401);
        assertThat(blocks()).as("nothing written or evicted with the read token").isEqualTo(1);

        RawHttp http = new RawHttp(address);
        assertThat(http.get("/health").status()).as("/health reveals counts only: open").isEqualTo(200);
        assertThat(http.get("/metrics").status()).as("/metrics reveals counts only: open").isEqualTo(200);
    }

    @Test
    @DisplayName("OPS-5 issue 33: without --http-read-token-file reads stay open (the write token alone guards writes)")
    void readsOpenWithoutReadToken() throws Exception {
        InetSocketAddress address = start(TestLimits.small().withToken(token("write", WRITER)));
        for (Call call : readCalls()) {
            RawHttp.Response r = call.send(address, null);
            assertThat(r.status()).as(call.path()).isEqualTo(expectedOpen(call));
        }
    }

    // ------------------------------------------------------------------ duplicate Authorization headers

    @Test
    @DisplayName("OPS-5 issue 33: duplicate Authorization headers are accepted when the first is right -> 400"
            + " DUPLICATE_AUTHORIZATION on every endpoint, nothing stored")
    void duplicateAuthorizationHeadersAcceptedWhenTheFirstIsRight() throws Exception {
        InetSocketAddress address = start(withTokens());
        String blocksType = "Content-Type: " + BlockFraming.CONTENT_TYPE + "\r\n";
        for (String second : List.of("Bearer nonsense-but-long-enough", "Bearer " + WRITER)) {
            RawHttp.Response r = send(address, "POST", "/cache/save?namespace=m",
                    blocksType + auth(WRITER) + "Authorization: " + second + "\r\n", record(0x11, 5));
            assertThat(r.status()).as(r.text()).isEqualTo(400);
            assertThat(code(r)).isEqualTo("DUPLICATE_AUTHORIZATION");
            assertThat(message(r)).contains("2 Authorization headers");
        }
        RawHttp.Response read = readCalls().get(0).send(address, READER + "\r\nAuthorization: Bearer " + READER);
        assertThat(read.status()).isEqualTo(400);
        assertThat(code(read)).isEqualTo("DUPLICATE_AUTHORIZATION");
        assertThat(blocks()).isZero();
        assertThat(metrics()).contains("orbitkv_http_errors_total{code=\"DUPLICATE_AUTHORIZATION\"} 3.0");
    }

    // ------------------------------------------------------------------ the endpoint label of early refusals

    @Test
    @DisplayName("DIAG-2 issue 33: 401s are counted under endpoint none -> under their endpoint (save, query)")
    void unauthorizedCountedUnderEndpointNone() throws Exception {
        InetSocketAddress address = start(withTokens());
        assertThat(send(address, "POST", "/cache/save?namespace=m", "Content-Type: " + BlockFraming.CONTENT_TYPE + "\r\n",
                record(0x11, 5)).status()).isEqualTo(401);
        assertThat(readCalls().get(0).send(address, null).status()).isEqualTo(401);
        String m = metrics();
        assertThat(m).contains("orbitkv_http_requests_total{endpoint=\"save\",status_class=\"4xx\"} 1.0")
                .contains("orbitkv_http_requests_total{endpoint=\"query\",status_class=\"4xx\"} 1.0")
                .doesNotContain("endpoint=\"none\"");
        assertThat(send(address, "GET", "/nowhere", "", null).status()).isEqualTo(404);
        assertThat(metrics()).as("an unknown path has no endpoint").contains(
                "orbitkv_http_requests_total{endpoint=\"none\",status_class=\"4xx\"} 1.0");
    }

    // ------------------------------------------------------------------ deadline_ms beyond 64 bits

    @Test
    @DisplayName("BND-1 issue 33: deadline_ms of 2^63 is 'must be an integer' -> INVALID_FIELD_VALUE naming the allowed range")
    void deadlineMsOf2Pow63IsMustBeAnInteger() throws Exception {
        InetSocketAddress address = start(TestLimits.small());
        RawHttp http = new RawHttp(address);
        for (String big : List.of("9223372036854775808", "-9223372036854775809", "1" + "0".repeat(40))) {
            RawHttp.Response r = http.postJson("/cache/restore", "{\"namespace\": \"m\", \"keys\": [\"11\"], \"deadline_ms\": "
                    + big + "}");
            assertThat(r.status()).as(r.text()).isEqualTo(400);
            assertThat(code(r)).isEqualTo("INVALID_FIELD_VALUE");
            assertThat(message(r)).startsWith("deadline_ms must be 1..").doesNotContain("must be an integer")
                    .contains(", got " + big.substring(0, Math.min(big.length(), 20)));
        }
        RawHttp.Response fraction = http.postJson("/cache/restore", "{\"namespace\": \"m\", \"keys\": [\"11\"], \"deadline_ms\": 1.5}");
        assertThat(code(fraction)).as("a fraction is still a wrong type").isEqualTo("INVALID_FIELD_TYPE");
    }

    // ------------------------------------------------------------------ per-client body allowance

    /** A connection from local address {@code from} (127.0.0.0/8 is all loopback on Linux). */
    private static RawConnection from(String from, InetSocketAddress to) throws IOException {
        Socket s = new Socket();
        s.bind(new InetSocketAddress(from, 0));
        s.connect(to, 5000);
        return new RawConnection(s);
    }

    @Test
    @DisplayName("INV-9 issue 33: four slow 256 MiB uploads at 8 KiB/s make every body request answer 429 -> one address"
            + " holds at most --http-body-bytes-in-flight-per-client-max; a save from another address succeeds meanwhile")
    void slowUploadsFromOneAddressMakeEveryBodyRequest429() throws Exception {
        // scaled down: 64 KiB saves, 256 KiB across all connections, 128 KiB per client address
        InetSocketAddress address = start(TestLimits.small().withBodies(64 * 1024, 64 * 1024, 64 * 1024)
                .withBodyBytesInFlightMax(256 * 1024).withBodyBytesInFlightPerClientMax(128 * 1024)
                .withTimeouts(new HttpLimits.Timeouts(10_000, 60_000, 1, 60_000, 2_000, 1 << 20, 30_000))); // the slow stay admitted
        byte[] big = record(0x21, 64 * 1024 - 7);
        String head = "POST /cache/save?namespace=m HTTP/1.1\r\nHost: t\r\nContent-Type: " + BlockFraming.CONTENT_TYPE
                + "\r\nContent-Length: " + big.length + "\r\n\r\n";
        List<RawConnection> slow = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) { // two slow uploads fill the first address's share
                RawConnection c = from("127.0.0.1", address);
                c.write(head).write(Arrays.copyOf(big, 100));
                slow.add(c);
            }
            awaitMetric("orbitkv_http_body_bytes_in_flight " + (2.0 * big.length));
            for (int i = 0; i < 2; i++) { // the third and fourth from the same address are refused
                try (RawConnection c = from("127.0.0.1", address)) {
                    c.write(head);
                    RawHttp.Response r = c.read();
                    assertThat(r.status()).as(r.text()).isEqualTo(429);
                    assertThat(code(r)).isEqualTo("TOO_MANY_CLIENT_BODY_BYTES_IN_FLIGHT");
                    assertThat(message(r)).contains("--http-body-bytes-in-flight-per-client-max (131072");
                    assertThat(r.header("retry-after")).isEqualTo("1");
                }
            }
            try (RawConnection other = from("127.0.0.2", address)) {
                other.write(head).write(big);
                RawHttp.Response r = other.read();
                assertThat(r.status()).as("a save from another address while the first holds its share: %s", r.text())
                        .isEqualTo(200);
            }
            for (RawConnection c : slow) {
                c.write(Arrays.copyOfRange(big, 100, big.length));
                assertThat(c.read().status()).isEqualTo(200);
            }
        } finally {
            for (RawConnection c : slow) {
                c.close();
            }
        }
        awaitMetric("orbitkv_http_body_bytes_in_flight 0.0");
        assertThat(metrics()).contains("orbitkv_http_errors_total{code=\"TOO_MANY_CLIENT_BODY_BYTES_IN_FLIGHT\"} 2.0");
    }
}
