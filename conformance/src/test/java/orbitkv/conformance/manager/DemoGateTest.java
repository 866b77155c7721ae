package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import orbitkv.conformance.etcd.EtcdRuntimeSelection;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code orbitkv demo} as an operator runs it: a child process that starts its own etcd and three Managers,
 * runs the workload, prints the summary table and stops everything (DESIGN §7 CLI). Uses the Debian etcd
 * binary that the etcd gates use; a missing binary fails the run (never skips).
 */
@Tag("gate")
class DemoGateTest {
    /** The whole demo: ≈ 19 s on a quiet machine; generous for a loaded one (issue 25), a hang still fails. */
    private static final Duration DEMO_BOUND = Duration.ofSeconds(300);

    @Test
    @DisplayName("PERF-1 PERF-2 PERF-4 INV-2 INV-7 API-5 IDX-13 orbitkv demo runs its workload against real processes, verifies payloads, prints the summary and exits 0")
    void demo(@TempDir Path dir) throws Exception {
        try (ManagerProcess demo = ManagerProcess.launch("demo", dir, List.of("demo", "--blocks", "8",
                "--block-bytes", "4096", "--etcd-binary", EtcdRuntimeSelection.DEBIAN_ETCD.toString()))) {
            int exit = demo.awaitExit(DEMO_BOUND);
            String out = demo.stdoutText();
            System.out.println(out);
            assertThat(exit).as(out + "\n" + demo.stderrText()).isZero();
            assertThat(out).contains("[demo] manager n1 ready", "[demo] kill -9 n1", "all Managers stopped with SIGTERM")
                    .contains("| blocks saved / bytes", "32 / 131072")
                    .contains("| blocks restored and verified / bytes", "24 / 98304")
                    // issue 13 item 7: every Manager restored another's 8 blocks once per backend, byte-exact
                    .contains("| peer restores verified, blocks / bytes per route",
                            "peer-dram+shm 24 / 98304, peer-dram+tcp 24 / 98304")
                    .containsPattern("peer READ throughput .*\\{shm=[0-9.]+ MiB/s, tcp=[0-9.]+ MiB/s\\}")
                    // issue 37 item 7: a warm, batched figure with its case, beside local and a raw loopback socket
                    .containsPattern("restore throughput, warm and batched +\\| \\{local=[0-9]+ MiB/s, shm=[0-9]+ MiB/s, "
                            + "tcp=[0-9]+ MiB/s, raw loopback socket=[0-9]+ MiB/s\\} \\(8 x 4 KiB per restore, median of 20")
                    .contains("SIGTERM exit codes", "{0=3}")
                    .contains("| errors", "restart (new incarnation)", "n1/1/", "-> n1/2/")
                    .contains("await outcomes (peer fences)", "{OK=6}", "0 still listed on n2 after await",
                            "no sync/await in the measured path", "await OK, 8/8 new listed, 0 old listed");
            assertThat(out).doesNotContain("error: ");
        }
    }
}
