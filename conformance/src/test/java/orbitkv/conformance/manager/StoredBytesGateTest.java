package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
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
 * Every stored byte is checked and a save stores all of its records or none (issue 20 items 2 and 3), against
 * one real standalone Manager process through its HTTP API only: what an engine or a disk fault does to it.
 */
@Tag("gate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StoredBytesGateTest {
    private ManagerProcess manager;
    private ManagerApi api;
    private Path ssd;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        ssd = Files.createDirectories(dir.resolve("ssd"));
        Path dram = Files.createDirectories(dir.resolve("dram"));
        manager = ManagerProcess.start("stored-bytes", dir.resolve("logs"), List.of("--standalone",
                "--http-listen", "127.0.0.1:0", "--dram", "256KiB", "--block-bytes-max", "64KiB",
                "--save-body-bytes-max", "1MiB", "--dram-dir", dram.toString(), "--ssd-dir", ssd.toString(), "--ssd", "4MiB"));
        api = new ManagerApi(manager.httpBase());
    }

    @AfterAll
    void stop() {
        manager.close();
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

    private boolean resident(String key) {
        return !api.query("ns", List.of(key)).json().at("/candidates/0/replicas").isEmpty();
    }

    @Test
    @DisplayName("INV-9 a byte flipped in an SSD block file is a named miss (stop=corrupt-ssd), the residence is evicted; never 200 with wrong bytes")
    void flippedSsdByte() throws Exception {
        Map<String, byte[]> blocks = new LinkedHashMap<>();
        blocks.put("c1", ManagerApi.payload(7, 1, 8192));
        blocks.put("c2", ManagerApi.payload(7, 2, 8192));
        List<Path> before = blockFiles();
        assertThat(api.save("ns", blocks).status()).isEqualTo(200);
        assertThat(api.sync().status()).isEqualTo(200);
        List<Path> files = blockFiles().stream().filter(f -> !before.contains(f)).toList();
        assertThat(files).hasSize(2);
        assertThat(api.evict("ns", List.of("c1", "c2"), "DRAM").status()).isEqualTo(200);
        byte[] b = Files.readAllBytes(files.get(1));
        b[4000] ^= 0x20;
        Files.write(files.get(1), b);

        ManagerApi.Reply r = api.restore("ns", List.of("c1", "c2"));
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.header("X-OrbitKV-Route")).isEqualTo("r=1 stop=corrupt-ssd corrupt=checksum-mismatch routes=local-ssd[0,1):ready");
        assertThat(ManagerApi.unframe(r.body())).containsOnlyKeys("c1");
        assertThat(ManagerApi.unframe(r.body()).get("c1")).isEqualTo(blocks.get("c1"));
        assertThat(resident("c2")).as("the broken residence left the resident map").isFalse();
        assertThat(api.get("/metrics").text()).contains("orbitkv_tier_corrupt_total{medium=\"SSD\",reason=\"checksum-mismatch\"} 1.0");
    }

    @Test
    @DisplayName("INV-9 a save larger than the DRAM tier is refused whole (503) and stores nothing, instead of 200 with its first records already evicted by its last")
    void batchLargerThanTier() {
        Map<String, byte[]> blocks = new LinkedHashMap<>();
        for (int i = 0; i < 5; i++) {
            blocks.put("a" + i, ManagerApi.payload(3, i, 60 * 1024));
        }
        ManagerApi.Reply r = api.save("ns", blocks);
        assertThat(r.status()).as(r.text()).isEqualTo(503);
        assertThat(r.json().at("/error/code").asText()).isEqualTo("TIER_NO_EVICTABLE_SPACE");
        for (String k : blocks.keySet()) {
            assertThat(resident(k)).as("key %s of the refused save", k).isFalse();
        }
    }

    @Test
    @DisplayName("BND-1 a chunked save with one complete record and then an invalid chunk-size line keeps nothing")
    void brokenChunkKeepsNothing() throws Exception {
        byte[] record = ManagerApi.frame(Map.of("b1", ManagerApi.payload(5, 1, 100)));
        URI base = URI.create(manager.httpBase());
        String answer;
        try (Socket s = new Socket(base.getHost(), base.getPort())) {
            s.setSoTimeout(20_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /cache/save?namespace=ns HTTP/1.1\r\nHost: t\r\nContent-Type: " + ManagerApi.BLOCKS
                    + "\r\nTransfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(record.length) + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(record);
            out.write("\r\nzz\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            byte[] head = s.getInputStream().readNBytes(12);
            answer = new String(head, StandardCharsets.US_ASCII);
        }
        assertThat(answer).startsWith("HTTP/1.1 4");
        assertThat(resident("b1")).isFalse();
    }
}
