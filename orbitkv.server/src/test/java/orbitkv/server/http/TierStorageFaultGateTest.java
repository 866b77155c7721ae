package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.config.RawValues;
import orbitkv.server.config.Setting;
import orbitkv.server.runtime.StandaloneManager;
import orbitkv.server.tier.LocalResourceRefused;
import orbitkv.testing.RawHttp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import orbitkv.server.api.BlockFraming;

/**
 * Issue 33 findings on real small tmpfs mounts (root only; skipped where {@code mount -t tmpfs} is refused):
 * <ul>
 *   <li>"A --dram-dir tmpfs smaller than --dram is accepted and saves then get TCP resets with no log line while
 *       /health says ok";</li>
 *   <li>"A full SSD directory gives 17 IO_ERROR refusals, no log line, sync 200 and health ok".</li>
 * </ul>
 * A standalone Manager runs in this JVM (like StandaloneManagerTest); gate lane because it mounts filesystems.
 */
@Tag("gate")
class TierStorageFaultGateTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private final List<Path> mounts = new ArrayList<>();

    @AfterEach
    void unmount() throws Exception {
        for (Path m : mounts.reversed()) {
            run("umount", m.toString());
        }
    }

    private static int run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return p.exitValue();
    }

    /** A fresh tmpfs of {@code size} at {@code dir/name}, or a failure where mounting is not allowed. */
    private Path tmpfs(String name, String size) throws Exception {
        Path m = Files.createDirectory(dir.resolve(name));
        int rc = run("mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0700", "tmpfs", m.toString());
        // never skipped (a skipped gate in CI is a broken setup): CI and the test command run as root, where mount works
        assertThat(rc).as("mount -t tmpfs %s (this gate needs root, as CI has)", m).isZero();
        mounts.add(m);
        return m;
    }

    private static RawValues standalone(Path dramDir) {
        return new RawValues().put(Setting.STANDALONE, "true").put(Setting.HTTP_LISTEN, "127.0.0.1:0")
                .put(Setting.DRAM_DIR, dramDir.toString()).put(Setting.BLOCK_BYTES_MAX, "1MiB")
                .put(Setting.RESTORE_BYTES_IN_FLIGHT_MAX, "2MiB").put(Setting.DRAM_PINNED_BYTES_MAX, "1MiB")
                .put(Setting.SSD_PINNED_BYTES_MAX, "1MiB");
    }

    private static byte[] body(int blocks, int size, int first) {
        List<BlockFraming.Block> list = new ArrayList<>();
        for (int i = 0; i < blocks; i++) {
            list.add(new BlockFraming.Block(HexFormat.of().parseHex(String.format("%016x", first + i)),
                    HttpApiTest.payload(5, first + i, size)));
        }
        return HttpApiTest.body(list);
    }

    @Test
    @DisplayName("issue 33 dramDirSmallerThanDramAccepted: an 8 MiB tmpfs refuses --dram 16MiB at start, naming both sizes")
    void dramDirSmallerThanDramAccepted_refusedAtStart() throws Exception {
        Path shm = tmpfs("shm", "8m");
        ManagerConfig config = ManagerConfig.from(standalone(shm).put(Setting.DRAM, "16MiB"));
        assertThatThrownBy(() -> StandaloneManager.start(config, HttpApiServer::bind).shutdown())
                .isInstanceOf(LocalResourceRefused.class)
                .hasMessageContaining("--dram-dir " + shm + " has 8.0 MiB usable")
                .hasMessageContaining("--dram (16.0 MiB)")
                .hasMessageContaining("--restore-bytes-in-flight-max (2.0 MiB)");
        try (var left = Files.list(shm)) {
            assertThat(left.toList()).as("nothing created").isEmpty();
        }
    }

    @Test
    @DisplayName("issue 33 dramDirSmallerThanDramAccepted: a tmpfs filled by others after the start gives a named 503 refusal, no reset, and /health degraded")
    void dramDirSmallerThanDramAccepted_laterShortfallIsANamedRefusal() throws Exception {
        Path shm = tmpfs("shm", "8m");
        StandaloneManager manager = StandaloneManager.start(ManagerConfig.from(standalone(shm).put(Setting.DRAM, "5MiB")), HttpApiServer::bind);
        try {
            RawHttp http = new RawHttp(manager.httpAddress());
            assertThat(http.post("/cache/save?namespace=ns", BlockFraming.CONTENT_TYPE, body(1, 512 << 10, 0)).status())
                    .isEqualTo(200);
            Files.write(shm.resolve("someone-elses-file"), new byte[6 << 20]); // another process takes the rest
            RawHttp.Response refused = http.post("/cache/save?namespace=ns", BlockFraming.CONTENT_TYPE,
                    body(4, 1 << 20, 100));
            assertThat(refused.status()).as(refused.text()).isEqualTo(503);
            assertThat(JSON.readTree(refused.body()).at("/error/code").asText()).isEqualTo("TIER_BACKING_STORE_FULL");
            assertThat(JSON.readTree(refused.body()).at("/error/message").asText()).contains("could not back",
                    "nothing of this save is stored");
            JsonNode health = JSON.readTree(http.get("/health").body());
            assertThat(health.get("status").asText()).isEqualTo("degraded");
            assertThat(health.get("reasons").toString()).contains("DRAM tier BACKING_STORE_FULL");
            assertThat(health.at("/tiers/0/state").asText()).isEqualTo("degraded");
            assertThat(health.at("/tiers/0/write_faults").asLong()).isGreaterThanOrEqualTo(1);
            assertThat(http.get("/metrics").text())
                    .contains("orbitkv_tier_refused_total{medium=\"DRAM\",reason=\"BACKING_STORE_FULL\"} 1.0")
                    .contains("orbitkv_tier_degraded{medium=\"DRAM\"} 1.0")
                    .contains("orbitkv_tier_write_faults_total{medium=\"DRAM\"} 1.0");
            // The save stored nothing; the earlier block is intact and restorable.
            RawHttp.Response restored = http.postJson("/cache/restore",
                    "{\"namespace\": \"ns\", \"keys\": [\"" + String.format("%016x", 0) + "\", \""
                            + String.format("%016x", 100) + "\"]}");
            assertThat(restored.header(CacheApi.RESTORED_HEADER)).isEqualTo("1");
        } finally {
            manager.shutdown();
        }
    }

    @Test
    @DisplayName("issue 33 fullSsdDirectoryGivesIoErrorsNoLogSync200HealthOk: a full SSD tmpfs makes sync 503 SSD_WRITE_FAILED and /health and status degraded, naming the SSD tier")
    void fullSsdDirectoryGivesIoErrorsNoLogSync200HealthOk() throws Exception {
        Path shm = Files.createDirectory(dir.resolve("shm"));
        Path ssd = tmpfs("ssd", "1m");
        StandaloneManager manager = StandaloneManager.start(ManagerConfig.from(standalone(shm).put(Setting.DRAM, "16MiB")
                .put(Setting.SSD_DIR, ssd.toString()).put(Setting.SSD, "16MiB").put(Setting.SSD_QUEUE_BYTES_MAX, "8MiB")), HttpApiServer::bind);
        try {
            RawHttp http = new RawHttp(manager.httpAddress());
            assertThat(http.post("/cache/save?namespace=ns", BlockFraming.CONTENT_TYPE, body(1, 256 << 10, 0)).status())
                    .isEqualTo(200);
            assertThat(http.post("/cache/sync", "application/json", new byte[0]).status()).isEqualTo(200);
            for (int i = 0; i < 17; i++) { // 17 x 256 KiB into a 1 MiB tmpfs: at least 14 SSD writes fail
                assertThat(http.post("/cache/save?namespace=ns", BlockFraming.CONTENT_TYPE, body(1, 256 << 10, 10 + i))
                        .status()).as("the DRAM save itself succeeds").isEqualTo(200);
            }
            RawHttp.Response sync = http.post("/cache/sync", "application/json", new byte[0]);
            assertThat(sync.status()).as(sync.text()).isEqualTo(503);
            assertThat(JSON.readTree(sync.body()).at("/error/code").asText()).isEqualTo("SSD_WRITE_FAILED");
            assertThat(JSON.readTree(sync.body()).at("/error/message").asText()).contains("No space left on device");
            JsonNode health = JSON.readTree(http.get("/health").body());
            assertThat(health.get("status").asText()).isEqualTo("degraded");
            assertThat(health.get("reasons").toString()).contains("SSD tier IO_ERROR");
            assertThat(health.at("/tiers/1/medium").asText()).isEqualTo("SSD");
            assertThat(health.at("/tiers/1/state").asText()).isEqualTo("degraded");
            assertThat(health.at("/tiers/1/fault/reason").asText()).isEqualTo("IO_ERROR");
            assertThat(health.at("/tiers/1/write_faults").asLong()).isGreaterThanOrEqualTo(14);
            JsonNode status = JSON.readTree(http.get("/cache/metadata/status").body());
            assertThat(status.at("/tiers/1/state").asText()).isEqualTo("degraded");
            assertThat(status.at("/inventory/head_sequence").isNumber()).as("the status fields stay").isTrue();
            assertThat(health.at("/tiers/0/state").asText()).isEqualTo("ok");
            assertThat(http.get("/metrics").text()).contains("orbitkv_tier_degraded{medium=\"SSD\"} 1.0")
                    .contains("orbitkv_tier_degraded{medium=\"DRAM\"} 0.0");
        } finally {
            manager.shutdown();
        }
    }
}
