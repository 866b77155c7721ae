package orbitkv.conformance.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerProcess;
import orbitkv.testing.ContractVerdicts;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The default run's smoke of the isolation harness (so it cannot rot): one pair per medium (DRAM, SSD), 2 warm-up + 12
 * measured rounds at a 150 ms foreground cadence, the declared 17 ms source and 25 ms observer cadences, real Managers
 * (the measured one and the data peer), a real pressure peer JVM and etcd. Every restore, local and from the data peer,
 * is byte-exact with the PERF-4 header (the harness throws otherwise), SSD restores are served from SSD, every peer
 * restore is served by the data peer over TCP, the pressure arm publishes and the idle arm does not, the Manager's
 * per-thread deltas exist for both arms, and the verdict arithmetic runs. Validity and verdicts are printed, not
 * judged: this is not a qualifying run. The formal matrix is {@code scripts/bench isolation}.
 *
 * <p>{@link #calibrationResumes()}: a calibration (idle / idle) of DRAM with a resume directory, a sitting of one of its
 * two pairs, then a second harness with the same settings loads that pair without launching a run, and a third with
 * another fingerprint is refused by name. Shortened (1 + 6 rounds, no peer restore) to keep the lane's time.
 */
@Tag("gate")
class IsolationHarnessSmokeTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    @Test
    @DisplayName("PERF-3 PERF-4 the isolation harness runs order-balanced idle/pressure pairs per medium with byte-exact local and peer restores, "
            + "validity checks and per-thread diagnostics for both arms")
    void smoke() throws Exception {
        IsolationHarness.Settings s = new IsolationHarness.Settings(List.of(IsolationHarness.Medium.DRAM, IsolationHarness.Medium.SSD), 1, 2, 12,
                150, 17, 25, 4, 16 << 10, 16, 512, 20261201L);
        assertThat(s.qualifying()).isFalse();
        assertThat(s.peerRestore()).as("the peer restore is part of the foreground by default").isTrue();
        BenchRun run = BenchRun.create("isolation-smoke");
        Path work = Files.createTempDirectory("orbitkv-isolation-smoke-");
        try {
            List<IsolationHarness.MediumResult> out = new IsolationHarness(s, run, ETCD, work).run();
            assertThat(out).hasSize(2);
            for (IsolationHarness.MediumResult m : out) {
                assertThat(m.pairs()).hasSize(1);
                for (IsolationHarness.RunResult r : m.pairs().getFirst()) {
                    assertRun(m.medium(), r);
                    assertThat(Files.readAllLines(run.dir().resolve("runs").resolve(r.label()).resolve("rounds.csv")).getFirst())
                            .contains("peer_restore_start_ns,peer_restore_end_ns").endsWith("peer_served");
                }
                assertThat(m.verdicts()).containsOnlyKeys(IsolationHarness.Op.values());
                m.verdicts().values().forEach(v -> {
                    assertThat(v.ratios()).hasSize(1);
                    assertThat(v.ratios()[0]).isPositive().isFinite();
                    assertThat(v.upperBound()).isEqualTo(v.geometricMean()); // one pair: every resample is that pair
                });
                String med = m.medium().name().toLowerCase(java.util.Locale.ROOT);
                assertThat(run.dir().resolve("isolation-ratios-" + med + ".png")).isNotEmptyFile();
                assertThat(run.dir().resolve("isolation-cdf-" + med + ".png")).isNotEmptyFile();
            }
        } finally {
            ManagerProcess.deleteTree(work);
        }
    }

    private static void assertRun(IsolationHarness.Medium medium, IsolationHarness.RunResult r) {
        assertThat(r.failure()).as(r.label()).isNull();
        assertThat(r.rounds()).hasSize(14);
        assertThat(r.rounds().stream().filter(IsolationHarness.Round::warmup)).hasSize(2);
        if (medium == IsolationHarness.Medium.SSD) {
            assertThat(r.rounds()).allSatisfy(x -> assertThat(x.ssdServed()).isEqualTo(4));
        }
        assertThat(r.rounds()).as("every round timed a byte-exact peer restore served by the data peer over TCP").allSatisfy(x -> {
            assertThat(x.measures(IsolationHarness.Op.PEER_RESTORE)).isTrue();
            assertThat(x.latency(IsolationHarness.Op.PEER_RESTORE)).isPositive();
            assertThat(x.peerServed()).isEqualTo(4);
        });
        if (r.arm() == IsolationHarness.Arm.PRESSURE) {
            assertThat(r.peerPublications()).as("the pressure peer published").isPositive();
            assertThat(r.validity().publications()).as("publications inside the measured interval").isPositive();
        } else {
            assertThat(r.peerPublications()).as("the idle peer published nothing").isZero();
            assertThat(r.validity().publications()).isZero();
        }
        assertThat(r.managerThreads().surviving()).as("the Manager's threads were sampled in both arms").isPositive();
        assertThat(r.managerThreads().groups()).isNotEmpty();
        assertThat(r.samplerPolls()).as("the observer sampled in both arms").isPositive();
        assertThat(r.processCores()).containsKeys("manager", "data-peer", "peer", "harness", "etcd");
    }

    @Test
    @DisplayName("PERF-3 the idle/idle calibration reports its noise floor; a resume directory keeps a sitting's pairs, a second sitting with the "
            + "same settings loads them without a run, and another fingerprint is refused by name")
    void calibrationResumes() throws Exception {
        Path work = Files.createTempDirectory("orbitkv-isolation-resume-");
        String dir = work.resolve("resume").toString();
        IsolationHarness.Settings s = new IsolationHarness.Settings(List.of(IsolationHarness.Medium.DRAM), 2, 1, 6, 150, 17, 25, 4, 16 << 10, 16,
                64, 20261201L).calibration(true).withPeerRestore(false).resumable(dir, 1);
        try {
            BenchRun first = BenchRun.create("isolation-calibration-smoke");
            IsolationHarness h1 = new IsolationHarness(s, first, ETCD, work);
            IsolationHarness.RunResult[] pair = h1.run().getFirst().pairs().getFirst();
            assertThat(h1.runsStarted()).as("one pair of this sitting").isEqualTo(2);
            assertThat(pair[0].arm()).isEqualTo(IsolationHarness.Arm.IDLE);
            assertThat(pair[1].arm()).isEqualTo(IsolationHarness.Arm.IDLE_TWIN);
            assertThat(pair).allSatisfy(r -> assertThat(r.failure()).as(r.label()).isNull());
            assertThat(h1.verdicts().cells()).as("no figure judged; the incomplete matrix is a collection failure per operation").hasSize(3)
                    .allSatisfy(c -> {
                        assertThat(c.verdict()).isEqualTo(ContractVerdicts.Verdict.COLLECTION_FAILED);
                        assertThat(c.note()).startsWith("1 of 2 pairs recorded; resume with -Dbench.isolation.resumeDir=" + dir);
                    });
            assertThat(Files.readString(first.dir().resolve("report.txt")))
                    .contains("REPORTED          PERF-3 calibration (idle / idle) noise floor DRAM save p99 [1 of 2 pairs]: geometric mean ")
                    .contains("bootstrap 95 % interval [").contains("max |ln ratio| ");
            assertThat(Path.of(dir, "DRAM-pair1", IsolationResume.PAIR)).isNotEmptyFile();

            BenchRun second = BenchRun.create("isolation-calibration-resume-smoke");
            IsolationHarness h2 = new IsolationHarness(s.resumable(dir, 0), second, ETCD, work);
            IsolationHarness.RunResult[] loaded = h2.run().getFirst().pairs().getFirst();
            assertThat(h2.runsStarted()).as("the recorded pair is loaded, not run").isZero();
            assertThat(Files.readString(second.dir().resolve("report.txt"))).contains("DRAM pair 1 loaded from " + dir + " (recorded ");
            for (int i = 0; i < 2; i++) {
                assertThat(loaded[i].arm()).isEqualTo(pair[i].arm());
                assertThat(loaded[i].measured(IsolationHarness.Op.RESTORE)).containsExactly(pair[i].measured(IsolationHarness.Op.RESTORE));
                assertThat(loaded[i].valid()).isEqualTo(pair[i].valid());
            }

            IsolationHarness.Settings other = s.withPeerRestore(true);
            IsolationHarness h3 = new IsolationHarness(other, BenchRun.create("isolation-resume-refused-smoke"), ETCD, work);
            assertThatThrownBy(h3::run).isInstanceOf(IllegalStateException.class).hasMessageContaining("[" + s.fingerprint() + "]")
                    .hasMessageContaining("[" + other.fingerprint() + "]");
            assertThat(h3.runsStarted()).isZero();
        } finally {
            ManagerProcess.deleteTree(work);
        }
    }
}
