package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two Managers on one {@code --ssd-dir} never serve each other's bytes (issue 20 item 1), with real Manager
 * processes: the second is refused at start with a message naming the holder, the first keeps serving its own
 * bytes, and the DRAM arena a kill -9'd Manager leaves behind is reclaimed by the next start.
 */
@Tag("gate")
class SharedDirectoryTest {
    private static final Duration BOUND = Duration.ofSeconds(30);

    private static List<String> args(String node, Path ssd, Path dram) {
        return List.of("--standalone", "--node-id", node, "--http-listen", "127.0.0.1:0", "--dram", "4MiB",
                "--block-bytes-max", "64KiB", "--dram-dir", dram.toString(), "--ssd-dir", ssd.toString(), "--ssd", "4MiB");
    }

    private static List<String> names(Path dir, String suffix) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(suffix)).sorted().toList();
        }
    }

    @Test
    @DisplayName("OPS-4 INV-9 a second Manager on a held --ssd-dir is refused naming the holder; the first keeps its bytes; a killed Manager's arena is reclaimed")
    void oneManagerPerDirectory(@TempDir Path dir) throws Exception {
        Path ssd = Files.createDirectories(dir.resolve("ssd"));
        Path dram = Files.createDirectories(dir.resolve("dram"));
        Path logs = dir.resolve("logs");
        List<ManagerProcess> started = new ArrayList<>();
        try {
            ManagerProcess a = ManagerProcess.start("a", logs, args("a", ssd, dram));
            started.add(a);
            ManagerApi apiA = new ManagerApi(a.httpBase());
            byte[] mine = ManagerApi.payload(1, 0, 4096);
            assertThat(apiA.save("ns", Map.of("aa", mine)).status()).isEqualTo(200);
            assertThat(apiA.sync().status()).isEqualTo(200);
            List<String> blocksOfA = names(ssd, ".okv");
            assertThat(blocksOfA).hasSize(1);

            List<String> second = new ArrayList<>(List.of("manager"));
            second.addAll(args("b", ssd, dram));
            ManagerProcess b = ManagerProcess.launch("b", logs, second);
            started.add(b);
            assertThat(b.awaitExit(BOUND)).as("the second Manager on %s must refuse to start; stdout: %s", ssd, b.stdoutText())
                    .isEqualTo(1);
            assertThat(b.stderrText()).contains("is in use by another Manager").contains("pid=" + a.pid())
                    .contains("node=a").contains("--ssd-dir");
            assertThat(names(ssd, ".okv")).as("the refused Manager deleted nothing").isEqualTo(blocksOfA);

            assertThat(apiA.evict("ns", List.of("aa"), "DRAM").status()).isEqualTo(200);
            ManagerApi.Reply r = apiA.restore("ns", List.of("aa"));
            assertThat(r.header("X-OrbitKV-Route")).isEqualTo("r=1 stop=complete routes=local-ssd[0,1):ready");
            assertThat(ManagerApi.unframe(r.body()).get("aa")).as("A serves its own bytes").isEqualTo(mine);

            List<String> arenaOfA = names(dram, ".arena");
            assertThat(arenaOfA).hasSize(1).allMatch(n -> n.startsWith("orbitkv-dram-a-"));
            a.kill9();
            assertThat(names(dram, ".arena")).as("kill -9 leaves the arena file behind").isEqualTo(arenaOfA);

            ManagerProcess c = ManagerProcess.start("c", logs, args("c", ssd, dram));
            started.add(c);
            List<String> arenas = names(dram, ".arena");
            assertThat(arenas).as("the stale arena of the killed Manager is reclaimed").hasSize(1)
                    .allMatch(n -> n.startsWith("orbitkv-dram-c-"));
            assertThat(names(ssd, ".okv")).as("OPS-4: the SSD tier starts cold").isEmpty();
            ManagerApi apiC = new ManagerApi(c.httpBase());
            assertThat(apiC.restore("ns", List.of("aa")).header("X-OrbitKV-Route")).isEqualTo("r=0 stop=metadata-unavailable");
            c.sigterm();
            assertThat(c.awaitExit(BOUND)).isZero();
            assertThat(names(dram, ".arena")).isEmpty();
        } finally {
            started.forEach(ManagerProcess::close);
        }
    }
}
