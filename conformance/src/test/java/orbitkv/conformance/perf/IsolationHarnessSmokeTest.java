package orbitkv.conformance.perf;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerProcess;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The default run's smoke of the isolation harness (so it cannot rot): one pair per medium (DRAM, SSD), 2 warm-up + 12
 * measured rounds at a 150 ms foreground cadence, the declared 17 ms source and 25 ms observer cadences, real Managers,
 * a real pressure peer JVM and etcd. Every restore is byte-exact with the PERF-4 header (the harness throws otherwise),
 * SSD restores are served from SSD, the pressure arm publishes and the idle arm does not, the Manager's per-thread
 * deltas exist for both arms, and the verdict arithmetic runs. Validity and verdicts are printed, not judged: this is
 * not a qualifying run. The formal matrix is {@code scripts/bench isolation}.
 */
@Tag("gate")
class IsolationHarnessSmokeTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    @Test
    @DisplayName("PERF-3 PERF-4 the isolation harness runs order-balanced idle/pressure pairs per medium with byte-exact restores, validity checks "
            + "and per-thread diagnostics for both arms")
    void smoke() throws Exception {
        IsolationHarness.Settings s = new IsolationHarness.Settings(List.of(IsolationHarness.Medium.DRAM, IsolationHarness.Medium.SSD), 1, 2, 12,
                150, 17, 25, 4, 16 << 10, 16, 512, 20261201L);
        assertThat(s.qualifying()).isFalse();
        BenchRun run = BenchRun.create("isolation-smoke");
        Path work = Files.createTempDirectory("orbitkv-isolation-smoke-");
        try {
            List<IsolationHarness.MediumResult> out = new IsolationHarness(s, run, ETCD, work).run();
            assertThat(out).hasSize(2);
            for (IsolationHarness.MediumResult m : out) {
                assertThat(m.pairs()).hasSize(1);
                for (IsolationHarness.RunResult r : m.pairs().getFirst()) {
                    assertThat(r.failure()).as(r.label()).isNull();
                    assertThat(r.rounds()).hasSize(14);
                    assertThat(r.rounds().stream().filter(IsolationHarness.Round::warmup)).hasSize(2);
                    if (m.medium() == IsolationHarness.Medium.SSD) {
                        assertThat(r.rounds()).allSatisfy(x -> assertThat(x.ssdServed()).isEqualTo(4));
                    }
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
                    assertThat(r.processCores()).containsKeys("manager", "peer", "harness", "etcd");
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
}
