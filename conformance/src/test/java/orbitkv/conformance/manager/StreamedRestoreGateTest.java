package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The streamed restore (issue 35 item 4, G7) against one real standalone Manager process through its HTTP API:
 * {@code "stream": true} answers each verified record as it is delivered and then the end record (a zero-length key,
 * JSON payload of restored count, stop and route). With {@code --restore-bytes-in-flight-max 64MiB}, 8 × 32 MiB
 * streamed completes byte-exact while the non-streamed form stops at the budget ({@code response-memory}) as before;
 * a byte flipped in an SSD block mid-prefix ends the stream with {@code corrupt-ssd}: no bad record is ever sent.
 */
@Tag("gate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StreamedRestoreGateTest {
    private static final int MIB = 1 << 20;
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private ManagerProcess manager;
    private ManagerApi api;
    private Path ssd;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        ssd = Files.createDirectories(dir.resolve("ssd"));
        Path dram = Files.createDirectories(dir.resolve("dram"));
        manager = ManagerProcess.start("streamed-restore", dir.resolve("logs"), List.of("--standalone",
                "--http-listen", "127.0.0.1:0", "--block-bytes-max", "32MiB", "--dram", "384MiB", "--dram-dir", dram.toString(),
                "--ssd-dir", ssd.toString(), "--ssd", "512MiB", "--restore-bytes-in-flight-max", "64MiB"));
        api = new ManagerApi(manager.httpBase(), Duration.ofSeconds(120));
    }

    @AfterAll
    void stop() {
        manager.close();
    }

    /** One decoded record of a streamed answer; {@code end} is the end record's JSON (then key and payload are null). */
    private record Streamed(List<String> keys, List<byte[]> payloads, JsonNode end, boolean eof) {}

    /** Reads a streamed restore answer record by record, then checks that nothing follows the end record. */
    private Streamed streamedRestore(String namespace, List<String> keys) throws Exception {
        String body = "{\"namespace\": \"" + namespace + "\", \"keys\": [\"" + String.join("\", \"", keys)
                + "\"], \"deadline_ms\": 60000, \"stream\": true}";
        HttpRequest req = HttpRequest.newBuilder(URI.create(manager.httpBase() + "/cache/restore"))
                .timeout(Duration.ofSeconds(120)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<InputStream> r = CLIENT.send(req, HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("X-OrbitKV-Stream")).hasValue("1");
        List<String> got = new ArrayList<>();
        List<byte[]> payloads = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(r.body())) {
            while (true) {
                int keyLength = in.readUnsignedShort();
                byte[] key = in.readNBytes(keyLength);
                byte[] payload = new byte[in.readInt()];
                in.readFully(payload);
                if (keyLength == 0) {
                    return new Streamed(got, payloads, new ObjectMapper().readTree(payload), in.read() == -1);
                }
                got.add(HexFormat.of().formatHex(key));
                payloads.add(payload);
            }
        } catch (EOFException cut) {
            return new Streamed(got, payloads, null, true);
        }
    }

    @Test
    @DisplayName("G7 BND-1 8 x 32 MiB streamed through a 64 MiB restore budget completes byte-exact with its end record; non-streamed stops at response-memory")
    void largerThanTheBudget() throws Exception {
        List<String> keys = new ArrayList<>();
        for (int half = 0; half < 2; half++) {
            Map<String, byte[]> blocks = new LinkedHashMap<>();
            for (int i = half * 4; i < half * 4 + 4; i++) {
                String key = String.format("b%03d", i);
                keys.add(key);
                blocks.put(key, ManagerApi.payload(11, i, 32 * MIB));
            }
            ManagerApi.Reply saved = api.save("big", blocks);
            assertThat(saved.status()).as(saved.text()).isEqualTo(200);
        }
        assertThat(api.sync().status()).as("SSD copies written: the other test counts new block files").isEqualTo(200);
        Streamed s = streamedRestore("big", keys);
        assertThat(s.keys()).isEqualTo(keys);
        for (int i = 0; i < keys.size(); i++) {
            assertThat(s.payloads().get(i)).as("record %d byte-exact", i).isEqualTo(ManagerApi.payload(11, i, 32 * MIB));
        }
        assertThat(s.end()).as("the end record").isNotNull();
        assertThat(s.end().get("restored").asInt()).isEqualTo(8);
        assertThat(s.end().get("stop").asText()).isEqualTo("complete");
        assertThat(s.end().get("route").asText()).isEqualTo("r=8 stop=complete routes=local-dram[0,8):ready");
        assertThat(s.eof()).as("nothing after the end record").isTrue();

        ManagerApi.Reply whole = api.postJson("/cache/restore", "{\"namespace\": \"big\", \"keys\": [\""
                + String.join("\", \"", keys) + "\"], \"deadline_ms\": 60000}");
        assertThat(whole.status()).isEqualTo(200);
        assertThat(whole.header("X-OrbitKV-Restored")).isEqualTo("1");
        assertThat(whole.header("X-OrbitKV-Route")).startsWith("r=1 stop=response-memory");
        assertThat(ManagerApi.unframe(whole.body()).get(keys.get(0))).isEqualTo(ManagerApi.payload(11, 0, 32 * MIB));
        assertThat(api.get("/cache/limits").json().get("streamed_restore").asBoolean()).isTrue();
    }

    /** SSD block files in write order (the writer numbers them; the number is the last part of the name). */
    private List<Path> blockFiles() throws Exception {
        try (Stream<Path> s = Files.list(ssd)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".okv")).sorted(Comparator.comparingLong(p -> {
                String n = p.getFileName().toString();
                return Long.parseLong(n.substring(n.lastIndexOf('-') + 1, n.length() - 4));
            })).toList();
        }
    }

    @Test
    @DisplayName("G7 INV-9 a byte flipped in an SSD block mid-prefix ends the stream with corrupt-ssd; the records before it arrive, no bad record ever")
    void corruptSsdBlockMidStream() throws Exception {
        Map<String, byte[]> blocks = new LinkedHashMap<>();
        for (int i = 0; i < 4; i++) {
            blocks.put("c" + i, ManagerApi.payload(5, i, 64 * 1024));
        }
        List<Path> before = blockFiles();
        assertThat(api.save("cut", blocks).status()).isEqualTo(200);
        assertThat(api.sync().status()).isEqualTo(200);
        List<Path> files = blockFiles().stream().filter(f -> !before.contains(f)).toList();
        assertThat(files).hasSize(4);
        List<String> keys = List.copyOf(blocks.keySet());
        assertThat(api.evict("cut", keys, "DRAM").status()).isEqualTo(200);
        byte[] b = Files.readAllBytes(files.get(2));
        b[40_000] ^= 0x01;
        Files.write(files.get(2), b);

        Streamed s = streamedRestore("cut", keys);
        assertThat(s.keys()).containsExactly("c0", "c1");
        assertThat(s.payloads().get(0)).isEqualTo(blocks.get("c0"));
        assertThat(s.payloads().get(1)).isEqualTo(blocks.get("c1"));
        assertThat(s.end()).as("the end record").isNotNull();
        assertThat(s.end().get("restored").asInt()).isEqualTo(2);
        assertThat(s.end().get("stop").asText()).isEqualTo("corrupt-ssd corrupt=checksum-mismatch");
        assertThat(s.end().get("route").asText()).startsWith("r=2 stop=corrupt-ssd").contains("local-ssd[0,2):ready");
        assertThat(new String(api.get("/metrics").body(), StandardCharsets.UTF_8))
                .contains("orbitkv_tier_corrupt_total{medium=\"SSD\",reason=\"checksum-mismatch\"} 1.0");
    }
}
