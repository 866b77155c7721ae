package orbitkv.conformance.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerProcess;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The default run's smoke of the end-to-end restore/save harness (issue 24 item 1), so it cannot rot: two small
 * cases, one warm-up and three measured rounds of every arm. It checks collection only (every restore answered 200
 * over the arm's route with exactly the saved bytes, every save stored, a sample per arm and round), never the
 * figures. The formal run is {@code scripts/bench restore}.
 */
@Tag("gate")
@Timeout(300)
class RestoreHarnessSmokeTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    @Test
    @DisplayName("INV-2 INV-9 the restore harness restores over raw HTTP, a raw relay, local DRAM, local SSD, peer TCP and peer shared memory "
            + "byte-exact on the arm's route, and saves against the raw sink, in ABBA rounds")
    void smoke() throws Exception {
        RestoreHarness.Settings s = new RestoreHarness.Settings(
                List.of(new RestoreHarness.Case(1, 64 << 10), new RestoreHarness.Case(4, 256 << 10)), 1, 200, 1, 3, true,
                List.of("--transfer-reads-per-connection-max", "2"), 1 << 20);
        Path work = Files.createTempDirectory(Path.of("/dev/shm"), "orbitkv-restore-smoke-");
        try {
            BenchRun run = BenchRun.create("restore-smoke");
            RestoreHarness.Result r = new RestoreHarness(s, run, ETCD, work).run();
            assertThat(r.failure()).isNull();
            for (String node : List.of("s", "r")) { // bench.restore.jfr: each Manager's recording dumped at SIGTERM
                assertThat(run.dir().resolve(node + ".jfr")).isNotEmptyFile();
            }
            // issue 37 item 5: every case but the smallest is warmed for warmupCaseMs, not only the smallest
            assertThat(Files.readString(run.dir().resolve("report.txt")))
                    .containsPattern("warm-up: [1-9][0-9]* rounds of every arm of 4 x 256 KiB in")
                    .doesNotContain("rounds of every arm of 1 x 64 KiB")
                    // issue 37 item 5: the Managers' data-path events, per stage, over the measured rounds
                    .containsPattern("r http restore 200 answer [0-9]+ B: n [1-9][0-9]*, p50/p90 us \\{receive=")
                    .containsPattern("r exchange READ 65536 B Completed: n [1-9]")
                    .containsPattern("r exchange READ-SHM 65536 B Completed: n [1-9]")
                    .containsPattern("s serve READ 65536 B: n [1-9]")
                    .containsPattern("s http restore 200 answer [0-9]+ B: n [1-9]")
                    .containsPattern("r restore routes 1 grants 1 keys 1 65536 B: n [1-9][0-9]*, p50/p90 us \\{evidence=")
                    .containsPattern("s restore routes 1 grants 0 keys 1 65536 B: n [1-9]");
            assertThat(r.restore()).containsOnlyKeys(s.cases());
            r.restore().values().forEach(byArm -> {
                assertThat(byArm).containsOnlyKeys(RestoreHarness.Arm.values());
                byArm.values().forEach(RestoreHarnessSmokeTest::threePositiveSamples);
            });
            r.save().values().forEach(byArm -> byArm.values()
                    .forEach(RestoreHarnessSmokeTest::threePositiveSamples));
        } finally {
            ManagerProcess.deleteTree(work);
        }
    }

    private static void threePositiveSamples(long[] nanos) {
        assertThat(nanos).hasSize(3);
        assertThat(java.util.Arrays.stream(nanos).min().orElseThrow()).isPositive();
    }

    @Test
    @DisplayName("a cache sweep beyond 1 GiB or below zero is refused by name, with both sides of the bound")
    void sweepBound() {
        List<RestoreHarness.Case> one = List.of(new RestoreHarness.Case(1, 64 << 10));
        assertThat(new RestoreHarness.Settings(one, 0, 0, 0, 1, false, List.of(), RestoreHarness.Settings.SWEEP_BYTES_MAX)
                .sweepBytes()).isEqualTo(1L << 30);
        for (long bad : new long[] {RestoreHarness.Settings.SWEEP_BYTES_MAX + 1, -1}) {
            assertThatThrownBy(() -> new RestoreHarness.Settings(one, 0, 0, 0, 1, false,
                    List.of(), bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("sweep " + bad + " B (at most 1073741824)");
        }
    }

    @Test
    @DisplayName("a route header names the arm's kind and backend in every run, else the harness fails collection")
    void routeCheck() {
        assertThat(RestoreHarness.servedBy("local-dram[0,16):ready", RestoreHarness.Arm.LOCAL_DRAM)).isTrue();
        assertThat(RestoreHarness.servedBy("local-dram[0,8):ready,local-ssd[8,16):ready", RestoreHarness.Arm.LOCAL_DRAM)).isFalse();
        assertThat(RestoreHarness.servedBy("peer-dram@s/1[0,4):ready+tcp", RestoreHarness.Arm.PEER_TCP)).isTrue();
        assertThat(RestoreHarness.servedBy("peer-dram@s/1[0,4):ready+shm", RestoreHarness.Arm.PEER_TCP)).isFalse();
        assertThat(RestoreHarness.servedBy("peer-dram@s/1[0,4):ready+shm", RestoreHarness.Arm.PEER_SHM)).isTrue();
    }
}
