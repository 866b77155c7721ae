package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Memory has a bound that holds (issue 20 item 4), with real Manager processes under a small heap: save bodies
 * stream into the DRAM arena, so concurrent saves larger than the whole heap succeed byte-exactly; and a
 * Manager whose configured bounds do not fit its heap refuses to start, naming the options.
 */
@Tag("gate")
class SaveMemoryBoundTest {
    private static final Duration BOUND = Duration.ofSeconds(45);
    /** Heap of the Manager under test: the 64 MiB base of MemoryBudget plus the small bounds below. */
    private static final List<String> SMALL_HEAP = List.of("-Xmx80m", "-XX:MaxDirectMemorySize=96m");
    private static final int BLOCK = 8 * 1024 * 1024;

    @Test
    @DisplayName("BND-1 INV-9 two concurrent 40 MiB saves on an 80 MiB heap stream into the arena and restore byte-exactly")
    void savesLargerThanTheHeap(@TempDir Path dir) throws Exception {
        Path dram = Files.createDirectories(dir.resolve("dram"));
        List<String> args = new ArrayList<>(List.of("manager", "--standalone", "--http-listen", "127.0.0.1:0",
                "--dram", "100MiB", "--dram-dir", dram.toString(), "--block-bytes-max", "8MiB",
                "--save-body-bytes-max", "48MiB", "--restore-bytes-in-flight-max", "24MiB",
                "--journal-retention-bytes-max", "4MiB", "--http-requests-in-flight-max", "8"));
        try (ManagerProcess m = ManagerProcess.launch("small-heap", dir.resolve("logs"), SMALL_HEAP, args)) {
            m.awaitReady();
            ManagerApi api = new ManagerApi(m.httpBase());
            List<Map<String, byte[]>> saves = new ArrayList<>();
            for (int s = 0; s < 2; s++) {
                Map<String, byte[]> blocks = new LinkedHashMap<>();
                for (int i = 0; i < 5; i++) {
                    blocks.put(String.format("%02x%02x", s, i), ManagerApi.payload(s + 1, i, BLOCK));
                }
                saves.add(blocks);
            }
            try (ExecutorService pool = Executors.newFixedThreadPool(2)) {
                List<Future<ManagerApi.Reply>> replies = new ArrayList<>();
                for (Map<String, byte[]> blocks : saves) {
                    replies.add(pool.submit(() -> api.save("big", blocks)));
                }
                for (Future<ManagerApi.Reply> f : replies) {
                    ManagerApi.Reply r = f.get();
                    assertThat(r.status()).as(r.text()).isEqualTo(200);
                    assertThat(r.json().get("saved")).hasSize(5);
                }
            }
            for (Map<String, byte[]> blocks : saves) {
                for (Map.Entry<String, byte[]> e : blocks.entrySet()) { // one 8 MiB block per restore: 24 MiB budget
                    ManagerApi.Reply r = api.restore("big", List.of(e.getKey()));
                    assertThat(r.header("X-OrbitKV-Route")).isEqualTo("r=1 stop=complete routes=local-dram[0,1):ready");
                    assertThat(ManagerApi.unframe(r.body()).get(e.getKey())).isEqualTo(e.getValue());
                }
            }
        }
    }

    @Test
    @DisplayName("BND-6 a Manager whose default bounds exceed its heap refuses to start, naming the options and the limit to raise")
    void boundsBeyondHeapRefused(@TempDir Path dir) throws Exception {
        try (ManagerProcess m = ManagerProcess.launch("too-small", dir.resolve("logs"), SMALL_HEAP,
                List.of("manager", "--standalone", "--http-listen", "127.0.0.1:0", "--dram", "4MiB",
                        "--block-bytes-max", "1MiB", "--dram-dir", Files.createDirectories(dir.resolve("dram")).toString()))) {
            assertThat(m.awaitExit(BOUND)).as("stdout: %s", m.stdoutText()).isEqualTo(1);
            assertThat(m.stderrText()).contains("the heap limit is").contains("--journal-retention-bytes-max")
                    .contains("--restore-bytes-in-flight-max").contains("JDK_JAVA_OPTIONS=");
        }
    }
}
