package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
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
 * Issue 20 (hardening from black-box probing), the HTTP items, over real sockets against the HTTP API of a
 * standalone Manager: malformed transfer encoding (item 3), the body bytes bound (item 4), slow clients
 * (item 5), strict input and pipelining (item 8), the bearer token (item 9), and the 413 delivered to a
 * client that writes its whole body first (issue 18 item 4). Each test starts its own server with the
 * bounds it exercises.
 */
@Tag("unit")
class HttpHardeningTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration BOUND = Duration.ofSeconds(10);

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

    /** One record {@code u16 1 | key | u32 n | n bytes}. */
    private static byte[] record(int key, int payloadBytes) {
        return ByteBuffer.allocate(7 + payloadBytes).putShort((short) 1).put((byte) key).putInt(payloadBytes).array();
    }

    private static String saveHead(String extra) {
        return "POST /cache/save?namespace=m HTTP/1.1\r\nHost: t\r\nContent-Type: application/x-orbitkv-blocks\r\n" + extra;
    }

    private long blocks() throws IOException {
        return JSON.readTree(new RawHttp(server.boundAddress()).get("/health").body()).at("/tiers/0/blocks").asLong();
    }

    private String metrics() throws IOException {
        return new RawHttp(server.boundAddress()).get("/metrics").text();
    }

    private static String code(RawHttp.Response r) throws IOException {
        return JSON.readTree(r.body()).at("/error/code").asText();
    }

    // ------------------------------------------------------------------ item 3: malformed transfer encoding

    @Test
    @DisplayName("BND-1 issue 20.3: a chunked save with a complete record then an invalid chunk-size line is 400 MALFORMED_HTTP, stores nothing, closes at once")
    void invalidChunkSizeAfterRecord() throws Exception {
        InetSocketAddress address = start(TestLimits.small());
        byte[] rec = record(0x11, 1);
        try (RawConnection c = new RawConnection(address)) {
            c.write(saveHead("Transfer-Encoding: chunked\r\n\r\n") + Integer.toHexString(rec.length) + "\r\n");
            c.write(rec).write("\r\nzz\r\n");
            RawHttp.Response r = c.read();
            assertThat(r.status()).as(r.text()).isEqualTo(400);
            assertThat(code(r)).isEqualTo("MALFORMED_HTTP");
            assertThat(r.header("connection")).isEqualTo("close");
            assertThat(c.closedWithin(Duration.ofSeconds(3))).as("closed, not left hanging until the idle timeout").isTrue();
        }
        assertThat(blocks()).as("the complete record before the bad chunk is not kept").isZero();
    }

    @Test
    @DisplayName("BND-1 issue 20.3: an invalid chunk-size line alone is 400 MALFORMED_HTTP (not NO_RECORDS) and the connection closes at once")
    void invalidChunkSizeAlone() throws Exception {
        InetSocketAddress address = start(TestLimits.small());
        try (RawConnection c = new RawConnection(address)) {
            c.write(saveHead("Transfer-Encoding: chunked\r\n\r\n") + "zz\r\n");
            RawHttp.Response r = c.read();
            assertThat(r.status()).as(r.text()).isEqualTo(400);
            assertThat(code(r)).isEqualTo("MALFORMED_HTTP");
            assertThat(JSON.readTree(r.body()).at("/error/message").asText()).contains("transfer encoding");
            assertThat(c.closedWithin(Duration.ofSeconds(3))).isTrue();
        }
        assertThat(blocks()).isZero();
        assertThat(metrics()).contains("orbitkv_http_errors_total{code=\"MALFORMED_HTTP\"} 1.0");
    }

    // ------------------------------------------------------------------ item 8: pipelining

    @Test
    @DisplayName("INV-9 issue 20.8: 300 pipelined requests in one write are all answered, in order")
    void pipelinedRequestsAnsweredInOrder() throws Exception {
        InetSocketAddress address = start(TestLimits.small().withPipelinedRequestsMax(512));
        StringBuilder all = new StringBuilder();
        for (int i = 0; i < 300; i++) {
            all.append(i % 2 == 0 ? "GET /health HTTP/1.1\r\nHost: t\r\n\r\n"
                    : "GET /cache/metadata/status?owners_limit=" + (1 + i % 7) + " HTTP/1.1\r\nHost: t\r\n\r\n");
        }
        try (RawConnection c = new RawConnection(address)) {
            c.write(all.toString());
            for (int i = 0; i < 300; i++) {
                RawHttp.Response r = c.read();
                assertThat(r.status()).as("answer %d", i).isEqualTo(200);
                JsonNode body = JSON.readTree(r.body());
                assertThat(body.has(i % 2 == 0 ? "tiers" : "protocol")).as("answer %d in request order", i).isTrue();
            }
        }
    }

    @Test
    @DisplayName("INV-9 issue 20.8: beyond --http-pipelined-requests-max the connection is answered 429 TOO_MANY_PIPELINED_REQUESTS in order, counted, then closed")
    void pipelineBound() throws Exception {
        InetSocketAddress address = start(TestLimits.small().withPipelinedRequestsMax(16));
        try (RawConnection c = new RawConnection(address)) {
            c.write("GET /health HTTP/1.1\r\nHost: t\r\n\r\n".repeat(100));
            int ok = 0;
            RawHttp.Response r = c.read();
            while (r.status() == 200) {
                ok++;
                r = c.read();
            }
            assertThat(r.status()).isEqualTo(429);
            assertThat(code(r)).isEqualTo("TOO_MANY_PIPELINED_REQUESTS");
            assertThat(ok).isBetween(16, 99);
            assertThat(c.closedWithin(Duration.ofSeconds(3))).isTrue();
        }
        assertThat(metrics()).contains("orbitkv_http_errors_total{code=\"TOO_MANY_PIPELINED_REQUESTS\"} 1.0");
    }

    // ------------------------------------------------------------------ item 8: messages

    @Test
    @DisplayName("BND-1 issue 20.8: messages say what was wrong: a lone surrogate, an optional field set to null, trailing data, invalid UTF-8")
    void messagesSayWhatWasWrong() throws Exception {
        InetSocketAddress address = start(TestLimits.small());
        RawHttp http = new RawHttp(address);
        RawHttp.Response surrogate = http.postJson("/cache/query", "{\"namespace\": \"\\ud800\", \"keys\": [\"aa\"]}");
        assertThat(code(surrogate)).isEqualTo("INVALID_NAMESPACE");
        assertThat(message(surrogate)).contains("lone surrogate").doesNotContain("got 1 bytes");
        RawHttp.Response nullDeadline = http.postJson("/cache/restore",
                "{\"namespace\": \"m\", \"keys\": [\"aa\"], \"deadline_ms\": null}");
        assertThat(code(nullDeadline)).isEqualTo("INVALID_FIELD_TYPE");
        assertThat(message(nullDeadline)).contains("deadline_ms is optional").doesNotContain("required");
        RawHttp.Response second = http.postJson("/cache/query", "{\"namespace\": \"m\", \"keys\": [\"aa\"]} {}");
        assertThat(code(second)).isEqualTo("MALFORMED_JSON");
        assertThat(message(second)).contains("data after its JSON value");
        RawHttp.Response latin1 = http.post("/cache/query", "application/json",
                "{\"namespace\": \"m\u00e9\", \"keys\": [\"aa\"]}".getBytes(StandardCharsets.ISO_8859_1));
        assertThat(code(latin1)).isEqualTo("MALFORMED_JSON");
        assertThat(message(latin1)).contains("not valid UTF-8").contains("at byte 16");
        RawHttp.Response badNamespace = http.post("/cache/save?namespace=a%FF", BlockFraming.CONTENT_TYPE, record(1, 1));
        assertThat(code(badNamespace)).isEqualTo("INVALID_NAMESPACE");
        assertThat(message(badNamespace)).contains("not valid UTF-8").contains("at byte 1");
        RawHttp.Response badEscape = http.get("/cache/metadata/status?owners_limit=%G1");
        assertThat(badEscape.status()).isEqualTo(400);
        assertThat(message(badEscape)).contains("malformed percent-encoding at character 0: '%G1'");
    }

    private static String message(RawHttp.Response r) throws IOException {
        return JSON.readTree(r.body()).at("/error/message").asText();
    }

    // ------------------------------------------------------------------ item 4: body bytes in flight

    @Test
    @DisplayName("INV-9 issue 20.4: declared bodies beyond --http-body-bytes-in-flight-max across connections are refused 429 with a code, counted; admitted ones complete")
    void bodyBytesInFlightBound() throws Exception {
        InetSocketAddress address = start(TestLimits.small().withBodies(64 * 1024, 64 * 1024, 64 * 1024)
                .withBodyBytesInFlightMax(100_000));
        byte[] big = record(0x21, 60_000 - 7);
        try (RawConnection holder = new RawConnection(address)) {
            holder.write(saveHead("Content-Length: " + big.length + "\r\n\r\n"));
            holder.write(java.util.Arrays.copyOf(big, 100));
            awaitMetric("orbitkv_http_body_bytes_in_flight 60000.0");
            try (RawConnection refused = new RawConnection(address)) {
                refused.write(saveHead("Content-Length: " + big.length + "\r\n\r\n"));
                RawHttp.Response r = refused.read();
                assertThat(r.status()).as(r.text()).isEqualTo(429);
                assertThat(code(r)).isEqualTo("TOO_MANY_BODY_BYTES_IN_FLIGHT");
                assertThat(r.header("retry-after")).isEqualTo("1");
            }
            try (RawConnection chunked = new RawConnection(address)) { // reserved chunk by chunk
                chunked.write(saveHead("Transfer-Encoding: chunked\r\n\r\n"));
                byte[] body = record(0x22, 60_000);
                RawHttp.Response r = null;
                for (int off = 0; off < body.length; off += 8192) {
                    int n = Math.min(8192, body.length - off);
                    try {
                        chunked.write(Integer.toHexString(n) + "\r\n").write(java.util.Arrays.copyOfRange(body, off, off + n))
                                .write("\r\n");
                    } catch (IOException e) {
                        break; // refused and closed: the answer is waiting
                    }
                }
                r = chunked.read();
                assertThat(r.status()).as(r.text()).isEqualTo(429);
                assertThat(code(r)).isEqualTo("TOO_MANY_BODY_BYTES_IN_FLIGHT");
            }
            holder.write(java.util.Arrays.copyOfRange(big, 100, big.length));
            assertThat(holder.read().status()).isEqualTo(200);
        }
        awaitMetric("orbitkv_http_body_bytes_in_flight 0.0");
        RawHttp.Response again = new RawHttp(address).post("/cache/save?namespace=m", BlockFraming.CONTENT_TYPE, big);
        assertThat(again.status()).as("admitted once the bytes were released").isEqualTo(200);
        assertThat(metrics()).contains("orbitkv_http_errors_total{code=\"TOO_MANY_BODY_BYTES_IN_FLIGHT\"} 2.0");
        assertThat(metricValue("orbitkv_http_body_bytes_in_flight_peak")).as("the bound held").isBetween(60_000.0, 100_000.0);
        assertThat(blocks()).as("only the two admitted saves stored (one key, replaced)").isEqualTo(1);
    }

    private double metricValue(String name) throws IOException {
        return metrics().lines().filter(l -> l.startsWith(name + " ")).mapToDouble(l -> Double.parseDouble(l.split(" ")[1]))
                .findFirst().orElseThrow();
    }

    private void awaitMetric(String line) throws Exception {
        long until = System.nanoTime() + BOUND.toNanos();
        while (!metrics().contains(line)) {
            assertThat(System.nanoTime() - until).as("metric line %s within %s", line, BOUND).isNegative();
            Thread.onSpinWait();
        }
    }

    // ------------------------------------------------------------------ issue 18.4: 413 to write-everything-first clients

    @Test
    @DisplayName("BND-1 issue 18.4: an oversized save written whole before reading still receives the 413 JSON answer")
    void oversizedBodyWrittenFirstGets413() throws Exception {
        InetSocketAddress address = start(TestLimits.small());
        byte[] body = new byte[8 << 20]; // 8 MiB against a 64 KiB bound
        try (RawConnection c = new RawConnection(address)) {
            c.write(saveHead("Content-Length: " + body.length + "\r\n\r\n")).write(body); // all of it, then read
            RawHttp.Response r = c.read();
            assertThat(r.status()).isEqualTo(413);
            assertThat(code(r)).isEqualTo("BODY_TOO_LARGE");
            assertThat(c.closedWithin(Duration.ofSeconds(5))).as("the answer ends the output side").isTrue();
        }
        awaitMetric("orbitkv_http_connections_closed_total{cause=\"refused\"} 1.0");
        assertThat(blocks()).isZero();
    }

    // ------------------------------------------------------------------ item 5: slow clients

    /** Header deadline and body progress window of {@code ms}, 1 KiB per window, 60 s idle, 2 s / 1 MiB linger. */
    private static HttpLimits.Timeouts deadlines(long ms) {
        return new HttpLimits.Timeouts(ms, ms, 1024, 60_000, 2_000, 1 << 20, 30_000);
    }

    @Test
    @DisplayName("INV-9 issue 20.5: a request whose headers trickle is answered 408 HEADER_TIMEOUT and closed")
    void headerDeadline() throws Exception {
        InetSocketAddress address = start(TestLimits.small().withTimeouts(deadlines(2000)));
        try (RawConnection c = new RawConnection(address)) {
            long t0 = System.nanoTime();
            c.write("POST /cache/save?namespace=m HTTP/1.1\r\nHost: t\r\n");
            for (int i = 0; i < 3; i++) { // keep trickling header bytes: progress does not extend the deadline
                Thread.sleep(100);
                c.write("X-Slow-" + i + ": x\r\n");
            }
            RawHttp.Response r = c.read();
            assertThat(r.status()).isEqualTo(408);
            assertThat(code(r)).isEqualTo("HEADER_TIMEOUT");
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(BOUND);
            assertThat(c.closedWithin(Duration.ofSeconds(3))).isTrue();
        }
        awaitMetric("orbitkv_http_connections_closed_total{cause=\"header_timeout\"} 1.0");
    }

    @Test
    @DisplayName("INV-9 issue 20.5: bodies trickling in every request slot get 408 BODY_TIMEOUT; meanwhile /health and /metrics answer 200 from their own slots")
    void slowBodiesCannotTakeTheServer() throws Exception {
        InetSocketAddress address = start(TestLimits.small().withSlots(4, 2).withTimeouts(deadlines(5000)));
        List<RawConnection> slow = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                RawConnection c = new RawConnection(address);
                c.write(saveHead("Content-Length: 10000\r\n\r\n")).write(new byte[] {0}); // key_len's first byte
                slow.add(c);
            }
            awaitMetric("orbitkv_http_requests_in_flight 4.0");
            RawHttp http = new RawHttp(address);
            assertThat(http.get("/health").status()).as("a probe while every request slot is held").isEqualTo(200);
            assertThat(http.get("/metrics").status()).isEqualTo(200);
            RawHttp.Response refused = http.post("/cache/save?namespace=m", BlockFraming.CONTENT_TYPE, record(1, 1));
            assertThat(refused.status()).isEqualTo(429);
            assertThat(code(refused)).isEqualTo("TOO_MANY_REQUESTS_IN_FLIGHT");
            for (RawConnection c : slow) {
                c.write(new byte[] {1}); // one byte per window is below --http-body-progress-bytes-min
            }
            for (RawConnection c : slow) {
                RawHttp.Response r = c.read();
                assertThat(r.status()).isEqualTo(408);
                assertThat(code(r)).isEqualTo("BODY_TIMEOUT");
                assertThat(c.closedWithin(Duration.ofSeconds(3))).isTrue();
            }
        } finally {
            for (RawConnection c : slow) {
                c.close();
            }
        }
        awaitMetric("orbitkv_http_requests_in_flight 0.0");
        assertThat(new RawHttp(address).post("/cache/save?namespace=m", BlockFraming.CONTENT_TYPE, record(1, 1)).status())
                .isEqualTo(200);
        awaitMetric("orbitkv_http_connections_closed_total{cause=\"body_timeout\"} 4.0");
    }

    @Test
    @DisplayName("INV-9 issue 20.5: a body that keeps delivering the minimum per window is not cut off")
    void steadyBodyPasses() throws Exception {
        InetSocketAddress address = start(TestLimits.small().withTimeouts(deadlines(2000)));
        byte[] rec = record(0x31, 4000 - 7);
        try (RawConnection c = new RawConnection(address)) {
            c.write(saveHead("Content-Length: " + rec.length + "\r\n\r\n"));
            for (int off = 0; off < rec.length; off += 1000) { // 1000 bytes per 300 ms: above 1024 per 2 s
                c.write(java.util.Arrays.copyOfRange(rec, off, Math.min(rec.length, off + 1000)));
                Thread.sleep(300);
            }
            assertThat(c.read().status()).isEqualTo(200);
        }
    }

    // ------------------------------------------------------------------ item 9: bearer token

    @Test
    @DisplayName("OPS-5 issue 20.9: with a bearer token, save/evict/sync/await need it (401 UNAUTHORIZED, no state change); reads and probes do not")
    void bearerToken() throws Exception {
        Path file = dir.resolve("token");
        Files.writeString(file, "s3cret-token-0123456789\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        InetSocketAddress address = start(TestLimits.small().withToken(BearerToken.read(file)));
        RawHttp http = new RawHttp(address);
        for (String[] call : List.of(new String[] {"/cache/save?namespace=m", BlockFraming.CONTENT_TYPE},
                new String[] {"/cache/evict", "application/json"}, new String[] {"/cache/sync", null},
                new String[] {"/cache/metadata/await", "application/json"})) {
            byte[] body = call[0].startsWith("/cache/save") ? record(1, 1) : call[0].equals("/cache/sync") ? null
                    : "{}".getBytes(StandardCharsets.UTF_8);
            RawHttp.Response r = http.post(call[0], call[1], body);
            assertThat(r.status()).as(call[0]).isEqualTo(401);
            assertThat(code(r)).isEqualTo("UNAUTHORIZED");
            assertThat(r.header("www-authenticate")).startsWith("Bearer");
        }
        try (RawConnection c = new RawConnection(address)) {
            byte[] rec = record(1, 1);
            c.write(saveHead("Authorization: Bearer s3cret-token-0123456788\r\nContent-Length: " + rec.length + "\r\n\r\n"))
                    .write(rec);
            assertThat(c.read().status()).as("a wrong token").isEqualTo(401);
        }
        assertThat(blocks()).isZero();
        try (RawConnection c = new RawConnection(address)) {
            byte[] rec = record(1, 1);
            c.write(saveHead("Authorization: Bearer s3cret-token-0123456789\r\nContent-Length: " + rec.length + "\r\n\r\n"))
                    .write(rec);
            assertThat(c.read().status()).isEqualTo(200);
        }
        assertThat(http.postJson("/cache/query", "{\"namespace\": \"m\", \"keys\": [\"01\"]}").status()).isEqualTo(200);
        assertThat(http.get("/health").status()).isEqualTo(200);
        assertThat(blocks()).isEqualTo(1);
    }

}
