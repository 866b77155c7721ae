package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import orbitkv.server.incarnation.StandaloneMetadata;
import orbitkv.inventory.Scope;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.server.config.ListenAddress;
import orbitkv.server.net.NativeTransport;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import orbitkv.server.tier.SsdTier;
import orbitkv.testing.RawHttp;
import orbitkv.testing.TableRows;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import orbitkv.server.api.BlockFraming;

/** The HTTP API of a standalone Manager over real tiers and the native transport, through raw sockets. */
@Tag("unit")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HttpApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final long SAVE_BODY_MAX = 64 * 1024;
    static final long BLOCK_MAX = 4096;

    private LocalTiers tiers;
    private HttpApiServer server;
    private RawHttp http;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        ResidencySequence sequence = new ResidencySequence();
        tiers = new LocalTiers(DramTier.open(dir, 64 * 1024, 64, sequence),
                SsdTier.open(dir.resolve("ssd"), 1 << 20, 64, 64, 1 << 20, sequence), sequence);
        Incarnation self = Incarnation.random(new NodeId("n1"), new NodeEpoch(1));
        server = HttpApiServer.start(new ListenAddress("127.0.0.1", 0), NativeTransport.detect(), tiers,
                new StandaloneMetadata(null, self, Scope.all()),
                TestLimits.small());
        http = new RawHttp(server.boundAddress());
    }

    @AfterAll
    void stop() throws Exception {
        server.close();
        tiers.close();
    }

    static byte[] payload(long generation, long index, int size) {
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN).putLong(generation).putLong(index);
        for (int i = 16; i < size; i++) {
            b.put((byte) (generation + index * 13 + i));
        }
        return b.array();
    }

    static byte[] body(List<BlockFraming.Block> blocks) {
        ByteBuf buf = Unpooled.buffer();
        BlockFraming.encode(buf, blocks);
        byte[] out = new byte[buf.readableBytes()];
        buf.readBytes(out);
        return out;
    }

    private static BlockFraming.Block block(int key, long generation, int size) {
        return new BlockFraming.Block(new byte[] {(byte) 0xb0, (byte) key}, payload(generation, key, size));
    }

    private static String hex(int key) {
        return HexFormat.of().formatHex(new byte[] {(byte) 0xb0, (byte) key});
    }

    private JsonNode json(RawHttp.Response r) throws IOException {
        return JSON.readTree(r.body());
    }

    /** Observable state: head sequence, DRAM and SSD blocks. */
    private String state() throws IOException {
        JsonNode status = json(http.get("/cache/metadata/status"));
        JsonNode health = json(http.get("/health"));
        return status.at("/inventory/head_sequence").asLong() + " " + health.at("/tiers/0/blocks").asLong()
                + " " + health.at("/tiers/1/blocks").asLong();
    }

    @Test
    @Order(1)
    @DisplayName("INV-1 PERF-4 save then restore returns the exact payloads, the prefix in request order, with route headers")
    void saveAndRestore() throws Exception {
        List<BlockFraming.Block> blocks = List.of(block(1, 7, 300), block(2, 7, 4096), block(3, 7, 16));
        RawHttp.Response saved = http.post("/cache/save?namespace=model-a", BlockFraming.CONTENT_TYPE, body(blocks));
        assertThat(saved.status()).as(saved.text()).isEqualTo(200);
        JsonNode s = json(saved);
        assertThat(s.get("namespace").asText()).isEqualTo("model-a");
        assertThat(s.get("saved")).hasSize(3);
        assertThat(s.at("/saved/0/key").asText()).isEqualTo(hex(1));
        assertThat(s.at("/saved/0/medium").asText()).isEqualTo("DRAM");
        assertThat(s.at("/saved/1/size").asLong()).isEqualTo(4096);
        // The SSD write-through takes its own sequences asynchronously: the head may already be beyond.
        assertThat(s.at("/saved/2/sequence").asLong()).isLessThanOrEqualTo(s.get("head_sequence").asLong())
                .isGreaterThan(s.at("/saved/1/sequence").asLong());
        assertThat(s.has("refused")).isFalse();

        RawHttp.Response restored = http.postJson("/cache/restore",
                "{\"namespace\": \"model-a\", \"keys\": [\"" + hex(2) + "\", \"" + hex(1) + "\", \"ffff\", \"" + hex(3)
                        + "\"], \"deadline_ms\": 5000, \"ignored_field\": [1]}");
        assertThat(restored.status()).isEqualTo(200);
        assertThat(restored.header("content-type")).isEqualTo(BlockFraming.CONTENT_TYPE);
        assertThat(restored.header(CacheApi.RESTORED_HEADER)).isEqualTo("2");
        assertThat(restored.header(CacheApi.ROUTE_HEADER)).isEqualTo("r=2 stop=metadata-unavailable routes=local-dram[0,2):ready");
        BlockFraming.Decoder decoder = new BlockFraming.Decoder(1 << 20, 1 << 20);
        decoder.feed(Unpooled.wrappedBuffer(restored.body()));
        assertThat(decoder.finishBlocks()).containsExactly(blocks.get(1), blocks.get(0));
        // ROUTE-3: the planner's bounded trace of this restore, in the response and in the paginated route status
        String trace = restored.header(CacheApi.ROUTE_TRACE_HEADER);
        assertThat(trace).startsWith("v1 k=4 r=2 stop=metadata-unavailable plan=2:metadata-unavailable cov=unavailable")
                .contains("routes=").hasSizeLessThanOrEqualTo(512);
        JsonNode page = json(http.get("/cache/metadata/routes?limit=1"));
        assertThat(page.at("/traces/0/trace").asText()).isEqualTo(trace);
        assertThat(page.at("/traces/0/restored_keys").asInt()).isEqualTo(2);
        assertThat(page.at("/traces/0/selection_mode").asText()).isEqualTo("shadow");
    }

    @Test
    @Order(2)
    @DisplayName("IDX-7 INV-10 standalone query: coverage Unavailable, local candidates, recoverable prefix")
    void query() throws Exception {
        RawHttp.Response r = http.postJson("/cache/query",
                "{\"namespace\": \"model-a\", \"keys\": [\"" + hex(1) + "\", \"" + hex(3) + "\", \"ffff\", \"" + hex(2) + "\"]}");
        assertThat(r.status()).isEqualTo(200);
        JsonNode q = json(r);
        assertThat(q.get("coverage").asText()).isEqualTo("Unavailable");
        assertThat(q.get("view_generation").asLong()).isZero();
        assertThat(q.get("recoverable_prefix").asInt()).isEqualTo(2);
        assertThat(q.get("prefix_stop").asText()).as("IDX-14: why the prefix stops").isEqualTo("metadata-unavailable");
        assertThat(q.at("/candidates/0/replicas/0/local").asBoolean()).isTrue();
        assertThat(q.at("/candidates/0/replicas/0/owner/node_id").asText()).isEqualTo("n1");
        assertThat(q.at("/candidates/2/replicas")).isEmpty();
        assertThat(q.at("/candidates/3/truncated").asBoolean()).isFalse();
        RawHttp.Response other = http.postJson("/cache/query", "{\"namespace\": \"model-b\", \"keys\": [\"" + hex(1) + "\"]}");
        assertThat(json(other).get("recoverable_prefix").asInt()).as("namespaces are exact").isZero();
    }

    @Test
    @Order(3)
    @DisplayName("API-1 API-3 ROUTE-4 sync waits for SSD write-through and answers standalone; PUB-8 a DRAM evict leaves SSD serving")
    void syncEvictRestoreFromSsd() throws Exception {
        RawHttp.Response sync = http.post("/cache/sync", null, null);
        assertThat(sync.status()).isEqualTo(200);
        assertThat(sync.text()).isEqualTo("{\"standalone\":true}");
        RawHttp.Response evicted = http.postJson("/cache/evict",
                "{\"namespace\": \"model-a\", \"keys\": [\"" + hex(1) + "\", \"ffff\"], \"medium\": \"DRAM\"}");
        assertThat(evicted.status()).isEqualTo(200);
        assertThat(json(evicted).get("evicted").asLong()).isEqualTo(1);
        RawHttp.Response restored = http.postJson("/cache/restore",
                "{\"namespace\": \"model-a\", \"keys\": [\"" + hex(1) + "\", \"" + hex(3) + "\"]}");
        // ROUTE-4: the longest legal span wins; the SSD holds both keys, DRAM only the second
        assertThat(restored.header(CacheApi.ROUTE_HEADER)).isEqualTo("r=2 stop=complete routes=local-ssd[0,2):ready");
        BlockFraming.Decoder decoder = new BlockFraming.Decoder(1 << 20, 1 << 20);
        decoder.feed(Unpooled.wrappedBuffer(restored.body()));
        assertThat(decoder.finishBlocks()).containsExactly(block(1, 7, 300), block(3, 7, 16));
        RawHttp.Response all = http.postJson("/cache/evict",
                "{\"namespace\": \"model-a\", \"keys\": [\"" + hex(1) + "\"], \"medium\": \"ALL\"}");
        assertThat(json(all).get("evicted").asLong()).as("only the SSD residence was left").isEqualTo(1);
    }

    @Test
    @Order(4)
    @DisplayName("DIAG-1 DIAG-2 status, health and metrics of a standalone Manager; metrics carry no namespace or key labels")
    void diagnostics() throws Exception {
        JsonNode status = json(http.get("/cache/metadata/status?owners_limit=10"));
        assertThat(status.get("protocol").asText()).isEqualTo("orbitkv/inventory-stream/v4");
        assertThat(status.get("coverage").asText()).isEqualTo("Unavailable");
        assertThat(status.at("/scope/namespaces").asText()).isEqualTo("all");
        assertThat(status.at("/membership/valid").asBoolean()).isFalse();
        assertThat(status.get("owners")).isEmpty();
        assertThat(status.get("next_page_token").isNull()).isTrue();
        JsonNode health = json(http.get("/health"));
        assertThat(health.get("status").asText()).isEqualTo("ok");
        assertThat(health.get("mode").asText()).isEqualTo("standalone");
        RawHttp.Response metrics = http.get("/metrics");
        assertThat(metrics.status()).isEqualTo(200);
        assertThat(metrics.header("content-type")).startsWith("text/plain");
        assertThat(metrics.text()).contains("orbitkv_tier_blocks{medium=\"DRAM\"}")
                .contains("orbitkv_http_requests_total{endpoint=\"save\",status_class=\"2xx\"}")
                .doesNotContain("model-a").doesNotContain("namespace=").doesNotContain("key=").doesNotContain("incarnation");
    }

    @Test
    @Order(5)
    @DisplayName("BND-1 INV-9 a chunked save body that grows past the bound is refused while streaming and stores nothing")
    void chunkedOverflow() throws Exception {
        String[] before = state().split(" ");
        double evictedBefore = metric("orbitkv_tier_evicted_total{medium=\"DRAM\"}");
        double abortedBefore = metric("orbitkv_tier_reservations_aborted_total{medium=\"DRAM\"}");
        List<BlockFraming.Block> blocks = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            blocks.add(block(100 + i, 9, 4000));
            keys.add("\"" + hex(100 + i) + "\"");
        }
        RawHttp.Response r = http.send("POST", "/cache/save?namespace=model-a", BlockFraming.CONTENT_TYPE, body(blocks), -1L);
        assertThat(r.status()).isEqualTo(413);
        assertThat(json(r).at("/error/code").asText()).isEqualTo("BODY_TOO_LARGE");
        // Records 0..15 streamed into DRAM reservations before record 16's header overran the bound: every
        // one was freed, none is resident, nothing was journaled as a put. The 64 KiB arena was full, so the
        // reservations made room by LRU eviction: that (and only that) stays, each eviction a counted delete.
        JsonNode q = json(http.postJson("/cache/query", "{\"namespace\": \"model-a\", \"keys\": " + keys + "}"));
        for (JsonNode c : q.get("candidates")) {
            assertThat(c.get("replicas")).as("key %s of the refused save", c.get("key")).isEmpty();
        }
        assertThat(metric("orbitkv_tier_reserved_bytes{medium=\"DRAM\"}")).isZero();
        assertThat(metric("orbitkv_tier_reservations_aborted_total{medium=\"DRAM\"}") - abortedBefore).isEqualTo(16);
        long evicted = (long) (metric("orbitkv_tier_evicted_total{medium=\"DRAM\"}") - evictedBefore);
        String[] after = state().split(" ");
        assertThat(Long.parseLong(after[0])).as("only eviction deletes were journaled").isEqualTo(Long.parseLong(before[0]) + evicted);
        assertThat(Long.parseLong(after[1])).isEqualTo(Long.parseLong(before[1]) - evicted);
        assertThat(after[2]).isEqualTo(before[2]);
    }

    /** One sample of the Prometheus text, 0 when absent. */
    private double metric(String sample) throws IOException {
        for (String line : http.get("/metrics").text().split("\n")) {
            if (line.startsWith(sample + " ")) {
                return Double.parseDouble(line.substring(sample.length() + 1).strip());
            }
        }
        return 0;
    }

    /**
     * One row of http-refusals.table, read by the one table reader ({@link TableRows}, issue 34 item 6): columns
     * {@code request | content type | body | status code}, then {@code # RULE-IDs}.
     */
    record Row(String method, String path, String contentType, String body, int status, String code) {
        static Row of(TableRows.Row r) {
            String[] request = r.column(0).split(" ");
            String[] expected = r.column(3).split(" ");
            return new Row(request[0], request[1], r.column(1), r.column(2), Integer.parseInt(expected[0]), expected[1]);
        }
    }

    /** Each test is named by its rules, file and line, then the request and the expected answer. */
    Stream<Named<Row>> refusals() {
        return TableRows.read("http-refusals.table", HttpApiTest.class.getResourceAsStream("http-refusals.table"),
                        TableRows.BARS, 4)
                .stream().map(r -> Named.of(r.name() + ": " + r.column(0) + " -> " + r.column(3), Row.of(r)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusals")
    @Order(6)
    @DisplayName("BND-1 malformed requests get the documented 4xx/503 code and change no state")
    void refusal(Row row) throws Exception {
        String before = state();
        String contentType = row.contentType().equals("-") ? null : row.contentType();
        byte[] body = null;
        Long declared = null;
        String b = row.body();
        if (b.startsWith("json:")) {
            body = b.substring(5).getBytes(StandardCharsets.UTF_8);
        } else if (b.startsWith("hex:")) {
            body = HexFormat.of().parseHex(b.substring(4));
        } else if (b.startsWith("declare:")) {
            declared = Long.parseLong(b.substring(8));
        } else if (b.startsWith("chunked-zeros:")) {
            body = new byte[Integer.parseInt(b.substring(14))];
            declared = -1L;
        } else if (row.method().equals("POST")) {
            body = new byte[0];
        }
        RawHttp.Response r = http.send(row.method(), row.path(), contentType, body, declared);
        assertThat(r.status()).as(r.text()).isEqualTo(row.status());
        JsonNode error = json(r).get("error");
        assertThat(error.get("code").asText()).isEqualTo(row.code());
        assertThat(error.get("message").asText()).isNotBlank();
        assertThat(r.header("content-type")).isEqualTo("application/json");
        assertThat(state()).isEqualTo(before);
    }
}
