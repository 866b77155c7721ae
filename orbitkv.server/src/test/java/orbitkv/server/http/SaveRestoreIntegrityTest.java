package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
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
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import orbitkv.server.tier.SsdTier;
import orbitkv.testing.RawHttp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import orbitkv.server.api.BlockFraming;

/**
 * Stored bytes are checked on every restore, a save stores all of its records or none, and restore responses
 * are bounded in memory (issue 20 items 2, 3, 4), through the HTTP API of a standalone Manager over real tiers.
 */
@Tag("unit")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SaveRestoreIntegrityTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Two 1 KiB records fit the copy-out budget, three do not. */
    private static final long COPY_OUT_BYTES = 2 * (6 + 2 + 1000) + 100;

    private Path ssdDir;
    private LocalTiers tiers;
    private HttpApiServer server;
    private RawHttp http;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        ResidencySequence sequence = new ResidencySequence();
        ssdDir = dir.resolve("ssd");
        tiers = new LocalTiers(DramTier.open(dir, 64 * 1024, 64, sequence),
                SsdTier.open(ssdDir, 1 << 20, 64, 64, 1 << 20, sequence), sequence, new CopyOutBudget(COPY_OUT_BYTES));
        Incarnation self = Incarnation.random(new NodeId("n1"), new NodeEpoch(1));
        server = HttpApiServer.start(new ListenAddress("127.0.0.1", 0), NativeTransport.detect(), tiers,
                new StandaloneMetadata(null, self, Scope.all()), TestLimits.small());
        http = new RawHttp(server.boundAddress());
    }

    @AfterAll
    void stop() throws Exception {
        server.close();
        tiers.close();
    }

    private static BlockFraming.Block block(int key, int size) {
        return new BlockFraming.Block(new byte[] {(byte) 0xc0, (byte) key}, HttpApiTest.payload(key, key, size));
    }

    private static String hex(int key) {
        return HexFormat.of().formatHex(new byte[] {(byte) 0xc0, (byte) key});
    }

    private static byte[] frame(List<BlockFraming.Block> blocks) {
        return HttpApiTest.body(blocks);
    }

    private RawHttp.Response restore(int... keys) throws IOException {
        String list = String.join(", ", Arrays.stream(keys).mapToObj(k -> "\"" + hex(k) + "\"").toList());
        return http.postJson("/cache/restore", "{\"namespace\": \"ns\", \"keys\": [" + list + "]}");
    }

    private boolean resident(int key) throws IOException {
        JsonNode q = JSON.readTree(http.postJson("/cache/query", "{\"namespace\": \"ns\", \"keys\": [\"" + hex(key) + "\"]}").body());
        return !q.at("/candidates/0/replicas").isEmpty();
    }

    private double metric(String sample) throws IOException {
        for (String line : http.get("/metrics").text().split("\n")) {
            if (line.startsWith(sample + " ")) {
                return Double.parseDouble(line.substring(sample.length() + 1).strip());
            }
        }
        return 0;
    }

    /** SSD block files in write order (the writer numbers them). */
    private List<Path> blockFiles() throws IOException {
        try (Stream<Path> s = Files.list(ssdDir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".okv"))
                    .sorted(Comparator.comparingLong(p -> {
                        String n = p.getFileName().toString();
                        return Long.parseLong(n.substring(n.lastIndexOf('-') + 1, n.length() - 4));
                    })).toList();
        }
    }

    @Test
    @DisplayName("INV-9 API-* a flipped, truncated or deleted SSD block is a named miss (stop=corrupt-ssd), evicted and counted; never a 500, never wrong bytes")
    void brokenSsdBlocks() throws Exception {
        List<Path> earlier = blockFiles();
        assertThat(http.post("/cache/save?namespace=ns", BlockFraming.CONTENT_TYPE,
                frame(List.of(block(1, 1000), block(2, 1000), block(3, 1000)))).status()).isEqualTo(200);
        assertThat(http.post("/cache/sync", null, null).status()).isEqualTo(200);
        List<Path> files = blockFiles().stream().filter(f -> !earlier.contains(f)).toList();
        assertThat(files).hasSize(3);
        assertThat(http.postJson("/cache/evict", "{\"namespace\": \"ns\", \"keys\": [\"" + hex(1) + "\", \"" + hex(2)
                + "\", \"" + hex(3) + "\"], \"medium\": \"DRAM\"}").status()).isEqualTo(200);

        byte[] b = Files.readAllBytes(files.get(1));
        b[500] ^= 0x40;
        Files.write(files.get(1), b);
        RawHttp.Response r = restore(1, 2, 3);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.header(CacheApi.ROUTE_HEADER)).isEqualTo("r=1 stop=corrupt-ssd corrupt=checksum-mismatch routes=local-ssd[0,1):ready");
        assertThat(r.header(CacheApi.RESTORED_HEADER)).isEqualTo("1");
        BlockFraming.Decoder d = new BlockFraming.Decoder(1 << 20, 1 << 20);
        d.feed(Unpooled.wrappedBuffer(r.body()));
        assertThat(d.finishBlocks()).containsExactly(block(1, 1000));
        assertThat(resident(2)).as("the broken residence was evicted (a journal delete)").isFalse();

        Files.write(files.get(2), Arrays.copyOf(Files.readAllBytes(files.get(2)), 999));
        assertThat(restore(3).header(CacheApi.ROUTE_HEADER)).isEqualTo("r=0 stop=corrupt-ssd corrupt=truncated-file");
        Files.delete(files.get(0));
        assertThat(restore(1).header(CacheApi.ROUTE_HEADER)).isEqualTo("r=0 stop=corrupt-ssd corrupt=missing-file");
        assertThat(restore(1).header(CacheApi.ROUTE_HEADER)).as("once evicted, an ordinary miss").isEqualTo("r=0 stop=metadata-unavailable");
        assertThat(metric("orbitkv_tier_corrupt_total{medium=\"SSD\",reason=\"checksum-mismatch\"}")).isEqualTo(1);
        assertThat(metric("orbitkv_tier_corrupt_total{medium=\"SSD\",reason=\"truncated-file\"}")).isEqualTo(1);
        assertThat(metric("orbitkv_tier_corrupt_total{medium=\"SSD\",reason=\"missing-file\"}")).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-9 restore responses are bounded in memory: beyond --restore-bytes-in-flight-max the prefix stops (stop=response-memory), and the bytes come back once written")
    void copyOutBudget() throws Exception {
        assertThat(http.post("/cache/save?namespace=ns", BlockFraming.CONTENT_TYPE,
                frame(List.of(block(11, 1000), block(12, 1000), block(13, 1000)))).status()).isEqualTo(200);
        RawHttp.Response r = restore(11, 12, 13);
        assertThat(r.header(CacheApi.ROUTE_HEADER)).isEqualTo("r=2 stop=response-memory routes=local-dram[0,2):ready");
        assertThat(r.body()).hasSize(2 * 1008);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (tiers.copyOut().heldBytes() != 0 && System.nanoTime() < deadline) {
            Thread.sleep(2); // bounded poll: the budget is returned when Netty frees the written response
        }
        assertThat(tiers.copyOut().heldBytes()).isZero();
        assertThat(restore(13).header(CacheApi.ROUTE_HEADER)).isEqualTo("r=1 stop=complete routes=local-dram[0,1):ready");
        assertThat(metric("orbitkv_restore_response_memory_refusals_total")).isEqualTo(1);
    }

    @Test
    @DisplayName("BND-1 a chunked save with a complete record followed by an invalid chunk-size line stores nothing (400 MALFORMED_HTTP)")
    void malformedChunkedSaveStoresNothing() throws Exception {
        ByteBuf one = Unpooled.buffer();
        BlockFraming.encode(one, List.of(block(21, 100)));
        byte[] record = new byte[one.readableBytes()];
        one.readBytes(record);
        try (Socket s = new Socket()) {
            s.connect(server.boundAddress(), 5000);
            s.setSoTimeout(20_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /cache/save?namespace=ns HTTP/1.1\r\nHost: t\r\nContent-Type: " + BlockFraming.CONTENT_TYPE
                    + "\r\nTransfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(record.length) + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(record);
            out.write("\r\nzz\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(answer).startsWith("HTTP/1.1 400").contains("MALFORMED_HTTP");
        }
        assertThat(resident(21)).isFalse();
        assertThat(tiers.dram().usage().reservedBytes()).isZero();
    }

    @Test
    @DisplayName("BND-1 a body that ends inside its second record stores neither record (400 TRUNCATED_RECORD)")
    void truncatedBodyStoresNothing() throws Exception {
        byte[] body = frame(List.of(block(31, 200), block(32, 200)));
        RawHttp.Response r = http.post("/cache/save?namespace=ns", BlockFraming.CONTENT_TYPE, Arrays.copyOf(body, body.length - 50));
        assertThat(r.status()).isEqualTo(400);
        assertThat(JSON.readTree(r.body()).at("/error/code").asText()).isEqualTo("TRUNCATED_RECORD");
        assertThat(resident(31)).isFalse();
        assertThat(resident(32)).isFalse();
        assertThat(tiers.dram().usage().reservedBytes()).isZero();
    }
}
