package orbitkv.conformance.perf;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerProcess;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The default run's smoke of the visibility harness (so it cannot rot): two owners, a few samples per endpoint,
 * real Managers and etcd. It checks the collection contract, not the figures: every endpoint yields its samples,
 * each bound to a source identity, the observer's scope digest, one view and its exact terminal sequence, with
 * install after publication; the raw files and the plot exist. The formal cells are {@code scripts/bench visibility}.
 */
@Tag("gate")
class VisibilityHarnessSmokeTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    @Test
    @DisplayName("PERF-1 PERF-2 the visibility harness collects all four endpoints, bound to owner, epoch, incarnation, scope digest, view and exact sequence")
    void smoke() throws Exception {
        VisibilityHarness.Settings s = new VisibilityHarness.Settings(2, 2, 8, 4, 50, 5, 2, 1024, 1,
                List.of(VisibilityHarness.Endpoint.values()));
        BenchRun run = BenchRun.create("visibility-smoke");
        Path work = Files.createTempDirectory("orbitkv-visibility-smoke-");
        try {
            Map<VisibilityHarness.Endpoint, List<VisibilityHarness.Sample>> out = new VisibilityHarness(s, run, work, ETCD.endpoints()).run();
            assertThat(out).containsOnlyKeys(VisibilityHarness.Endpoint.values());
            out.forEach((e, samples) -> {
                assertThat(samples.stream().filter(x -> !x.warmup()).count()).as(e.label).isGreaterThanOrEqualTo(s.samples());
                assertThat(samples.stream().filter(VisibilityHarness.Sample::warmup).count()).as(e.label).isGreaterThanOrEqualTo(s.warmup());
                for (VisibilityHarness.Sample x : samples) {
                    assertThat(x.node()).startsWith("owner-");
                    assertThat(x.epoch()).isPositive();
                    assertThat(x.incarnation()).startsWith(x.node() + "/" + x.epoch() + "/");
                    assertThat(x.scopeDigest()).hasSize(64);
                    assertThat(x.viewId()).isNotBlank();
                    assertThat(x.terminal()).isPositive();
                    assertThat(x.publishNs()).as("publication after the save started").isGreaterThan(x.saveStartNs());
                    assertThat(x.installNs()).as("installation after publication (same clock domain)").isGreaterThan(x.publishNs());
                    assertThat(x.observedNs()).as("observation completion after the install stamp").isGreaterThan(x.installNs());
                }
                assertThat(run.dir().resolve("visibility-" + e.label + ".csv")).exists();
            });
            assertThat(Plots.visibilityCdf(run, out)).exists().isNotEmptyFile();
        } finally {
            ManagerProcess.deleteTree(work);
        }
    }
}
