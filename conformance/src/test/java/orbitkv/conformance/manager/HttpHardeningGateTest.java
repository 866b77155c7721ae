package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import orbitkv.testing.RawConnection;
import orbitkv.testing.RawHttp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Issue 20's HTTP findings re-run as the probe ran them: black box, against a real standalone Manager process
 * on loopback, with raw sockets and Python's {@code http.client}. One process for the class; the last test
 * (slow clients) leaves it with every request slot refused and then freed.
 */
@Tag("gate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HttpHardeningGateTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration BOUND = Duration.ofSeconds(20);
    /** The Manager's body progress window: trickling bodies are answered 408 within about this long. */
    private static final long PROGRESS_MS = 3000;

    private Path work;
    private ManagerProcess manager;
    private InetSocketAddress http;

    @BeforeAll
    void start() throws Exception {
        work = Files.createTempDirectory("orbitkv-http-gate-");
        Path dram = Files.createDirectories(work.resolve("dram"));
        manager = ManagerProcess.start("http-gate", work.resolve("logs"), List.of("--standalone",
                "--http-listen", "127.0.0.1:0", "--dram", "64MiB", "--block-bytes-max", "1MiB",
                "--save-body-bytes-max", "2MiB", "--dram-dir", dram.toString(),
                "--http-body-bytes-in-flight-max", "3MiB",
                "--http-header-timeout-ms", Long.toString(PROGRESS_MS), "--http-body-progress-ms", Long.toString(PROGRESS_MS)));
        URI base = URI.create(manager.httpBase());
        http = new InetSocketAddress(base.getHost(), base.getPort());
    }

    @AfterAll
    void stop() throws IOException {
        if (manager != null) {
            manager.close();
        }
        ManagerProcess.deleteTree(work);
    }

    private ManagerApi api() {
        return new ManagerApi(manager.httpBase());
    }

    private long blocks() {
        return api().health().at("/tiers/0/blocks").asLong();
    }

    private static byte[] record(int key, int payloadBytes) {
        return ByteBuffer.allocate(7 + payloadBytes).putShort((short) 1).put((byte) key).putInt(payloadBytes).array();
    }

    private static String saveHead(String extra) {
        return "POST /cache/save?namespace=gate HTTP/1.1\r\nHost: gate\r\nContent-Type: application/x-orbitkv-blocks\r\n" + extra;
    }

    @Test
    @Order(1)
    @DisplayName("BND-1 issue 20.3: a complete record then an invalid chunk-size line: 400 MALFORMED_HTTP, nothing stored, closed at once")
    void malformedTransferEncoding() throws Exception {
        long before = blocks();
        for (String tail : java.util.Arrays.asList("\r\nzz\r\n", null)) {
            try (RawConnection c = new RawConnection(http, BOUND)) {
                byte[] rec = record(0x51, 1);
                c.write(saveHead("Transfer-Encoding: chunked\r\n\r\n"));
                if (tail != null) {
                    c.write(Integer.toHexString(rec.length) + "\r\n").write(rec).write(tail);
                } else {
                    c.write("zz\r\n"); // the bad chunk size alone
                }
                RawHttp.Response r = c.read();
                assertThat(r.status()).as(r.text()).isEqualTo(400);
                assertThat(code(r)).isEqualTo("MALFORMED_HTTP");
                assertThat(c.closedWithin(Duration.ofSeconds(5))).as("closed, not held until the idle timeout").isTrue();
            }
        }
        assertThat(blocks()).isEqualTo(before);
    }

    @Test
    @Order(2)
    @DisplayName("INV-9 issue 20.8: 250 pipelined requests in one write are all answered in order; 400 meet the default bound of 256 visibly (429, in order, counted)")
    void pipelined() throws Exception {
        try (RawConnection c = new RawConnection(http, BOUND)) {
            c.write(pipeline(250));
            for (int i = 0; i < 250; i++) {
                RawHttp.Response r = c.read();
                assertThat(r.status()).as("answer %d", i).isEqualTo(200);
                assertThat(json(r).has(i % 2 == 0 ? "tiers" : "protocol")).as("answer %d in order", i).isTrue();
            }
        }
        try (RawConnection c = new RawConnection(http, BOUND)) {
            c.write(pipeline(400));
            int ok = 0;
            RawHttp.Response r = c.read();
            for (; r.status() == 200; r = c.read()) {
                assertThat(json(r).has(ok % 2 == 0 ? "tiers" : "protocol")).as("answer %d in order", ok).isTrue();
                ok++;
            }
            assertThat(ok).isGreaterThanOrEqualTo(256);
            assertThat(r.status()).isEqualTo(429);
            assertThat(code(r)).isEqualTo("TOO_MANY_PIPELINED_REQUESTS");
        }
        assertThat(api().get("/metrics").text()).contains("orbitkv_http_errors_total{code=\"TOO_MANY_PIPELINED_REQUESTS\"} 1.0");
    }

    private static String pipeline(int n) {
        StringBuilder all = new StringBuilder();
        for (int i = 0; i < n; i++) {
            all.append(i % 2 == 0 ? "GET /health HTTP/1.1\r\nHost: gate\r\n\r\n"
                    : "GET /cache/metadata/status?owners_limit=1 HTTP/1.1\r\nHost: gate\r\n\r\n");
        }
        return all.toString();
    }

    @Test
    @Order(3)
    @DisplayName("BND-1 issue 20.8: malformed percent-encoding and invalid UTF-8 in the target are 400 with a code, never 500 or a silent close")
    void strictTargets() throws Exception {
        long before = blocks();
        Map<String, String> expected = new LinkedHashMap<>();
        expected.put("GET /cache/metadata/status?owners_limit=%G1", "INVALID_QUERY_PARAMETER");
        expected.put("POST /cache/save?namespace=%G1", "INVALID_QUERY_PARAMETER");
        expected.put("GET /cache/%ZZ", "MALFORMED_HTTP");
        expected.put("POST /cache/save?namespace=%FF", "INVALID_NAMESPACE");
        expected.put("POST /cache/save?namespace=%FE", "INVALID_NAMESPACE");
        for (Map.Entry<String, String> e : expected.entrySet()) {
            String[] line = e.getKey().split(" ");
            byte[] body = line[0].equals("POST") ? record(0x52, 4) : new byte[0];
            try (RawConnection c = new RawConnection(http, BOUND)) {
                c.write(line[0] + " " + line[1] + " HTTP/1.1\r\nHost: gate\r\nContent-Type: application/x-orbitkv-blocks\r\n"
                        + "Content-Length: " + body.length + "\r\n\r\n").write(body);
                RawHttp.Response r = c.read();
                assertThat(r.status()).as(e.getKey() + ": " + r.text()).isEqualTo(400);
                assertThat(code(r)).as(e.getKey()).isEqualTo(e.getValue());
            }
        }
        assertThat(blocks()).as("neither U+FFFD namespace was created").isEqualTo(before);
    }

    @Test
    @Order(4)
    @DisplayName("BND-1 issue 18.4: Python's http.client, which sends a whole oversized save before reading, receives the 413 JSON answer")
    void oversizedSaveFromPythonClient() throws Exception {
        String script = """
                import http.client, json, sys
                c = http.client.HTTPConnection(sys.argv[1], int(sys.argv[2]), timeout=30)
                c.request("POST", "/cache/save?namespace=gate", body=b"\\0" * (8 << 20),
                          headers={"Content-Type": "application/x-orbitkv-blocks"})
                r = c.getresponse()
                print(r.status, json.loads(r.read())["error"]["code"])
                """;
        Process p = new ProcessBuilder("python3", "-c", script, http.getHostString(), Integer.toString(http.getPort()))
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(out).as("python3 http.client output").isEqualTo("413 BODY_TOO_LARGE");
        assertThat(p.exitValue()).isZero();
    }

    @Test
    @Order(5)
    @DisplayName("INV-9 issue 20.4: declared bodies beyond --http-body-bytes-in-flight-max are refused 429 TOO_MANY_BODY_BYTES_IN_FLIGHT while others hold the bytes")
    void bodyBytesInFlight() throws Exception {
        byte[] big = record(0x53, (1 << 20) - 100); // one block just under --block-bytes-max
        List<RawConnection> holders = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) { // 2 x 1 MiB of the 3 MiB budget
                RawConnection c = new RawConnection(http, BOUND);
                c.write(saveHead("Content-Length: " + big.length + "\r\n\r\n")).write(java.util.Arrays.copyOf(big, 10));
                holders.add(c);
            }
            awaitMetric("orbitkv_http_body_bytes_in_flight " + (2.0 * big.length));
            try (RawConnection c = new RawConnection(http, BOUND)) { // declares the 2 MiB save bound: 4 MiB would be in flight
                c.write(saveHead("Content-Length: " + (2 << 20) + "\r\n\r\n"));
                RawHttp.Response r = c.read();
                assertThat(r.status()).as(r.text()).isEqualTo(429);
                assertThat(code(r)).isEqualTo("TOO_MANY_BODY_BYTES_IN_FLIGHT");
            }
            for (RawConnection c : holders) {
                c.write(java.util.Arrays.copyOfRange(big, 10, big.length));
                assertThat(c.read().status()).isEqualTo(200);
            }
        } finally {
            for (RawConnection c : holders) {
                c.close();
            }
        }
        assertThat(api().get("/metrics").text()).contains("orbitkv_http_errors_total{code=\"TOO_MANY_BODY_BYTES_IN_FLIGHT\"} 1.0");
    }

    @Test
    @Order(6)
    @DisplayName("INV-9 issue 20.5: 256 connections trickling save bodies hold every request slot; /health and /metrics still answer 200; the trickles get 408 and the slots come back")
    void slowClients() throws Exception {
        List<RawConnection> slow = new ArrayList<>();
        try {
            for (int i = 0; i < 256; i++) {
                RawConnection c = new RawConnection(http, BOUND);
                c.write(saveHead("Content-Length: 1000\r\n\r\n")).write(new byte[] {0}); // one byte of 1000
                slow.add(c);
            }
            awaitMetric("orbitkv_http_requests_in_flight 256.0");
            for (int i = 0; i < 5; i++) {
                assertThat(api().get("/health").status()).as("/health while 256 bodies trickle").isEqualTo(200);
                assertThat(api().get("/metrics").status()).as("/metrics while 256 bodies trickle").isEqualTo(200);
            }
            ManagerApi.Reply refused = api().save("gate", Map.of("54", ManagerApi.payload(1, 1, 16)));
            assertThat(refused.status()).isEqualTo(429);
            long t0 = System.nanoTime();
            int timedOut = 0;
            for (RawConnection c : slow) {
                RawHttp.Response r = c.read();
                if (r.status() == 408 && code(r).equals("BODY_TIMEOUT")) {
                    timedOut++;
                }
            }
            assertThat(timedOut).isEqualTo(256);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(BOUND);
        } finally {
            for (RawConnection c : slow) {
                c.close();
            }
        }
        awaitMetric("orbitkv_http_requests_in_flight 0.0");
        assertThat(api().save("gate", Map.of("54", ManagerApi.payload(1, 1, 16))).status()).isEqualTo(200);
        try (RawConnection c = new RawConnection(http, BOUND)) { // headers that never finish: 408 HEADER_TIMEOUT
            c.write("POST /cache/save?namespace=gate HTTP/1.1\r\nHost: gate\r\n");
            RawHttp.Response r = c.read();
            assertThat(r.status()).isEqualTo(408);
            assertThat(code(r)).isEqualTo("HEADER_TIMEOUT");
        }
    }

    private void awaitMetric(String line) throws InterruptedException {
        long until = System.nanoTime() + BOUND.toNanos();
        while (!api().get("/metrics").text().contains(line)) {
            assertThat(System.nanoTime() - until).as("metric %s within %s", line, BOUND).isNegative();
            Thread.sleep(20); // polling a real process's /metrics; bounded by BOUND
        }
    }

    private static String code(RawHttp.Response r) throws IOException {
        return json(r).at("/error/code").asText();
    }

    private static JsonNode json(RawHttp.Response r) throws IOException {
        return JSON.readTree(r.body());
    }
}
