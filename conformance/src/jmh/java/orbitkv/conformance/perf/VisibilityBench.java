package orbitkv.conformance.perf;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerProcess;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The formal visibility cells (PERF-1, PERF-2), never in the default run (the name matches no surefire include):
 * {@code scripts/bench visibility} or {@code mvn -B -pl conformance -am test -Pperf-visibility}. Parameters are the
 * {@code bench.visibility.*} properties of {@link VisibilityHarness.Settings#fromProperties()}.
 */
@Tag("qualification")
@Timeout(value = 4, unit = java.util.concurrent.TimeUnit.HOURS) // qualification runs are long; the 20 m default is for CI lanes
class VisibilityBench {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    @Test
    void visibility() throws Exception {
        VisibilityHarness.Settings s = VisibilityHarness.Settings.fromProperties();
        BenchRun run = BenchRun.create("visibility");
        Path work = Files.createTempDirectory("orbitkv-visibility-");
        try {
            Map<VisibilityHarness.Endpoint, List<VisibilityHarness.Sample>> out = new VisibilityHarness(s, run, work, ETCD.endpoints()).run();
            for (List<VisibilityHarness.Sample> l : out.values()) {
                assertThat(l.stream().filter(x -> !x.warmup()).count()).isGreaterThanOrEqualTo(s.samples());
                assertThat(l.stream().filter(VisibilityHarness.Sample::warmup).count()).isGreaterThanOrEqualTo(s.warmup());
            }
            Plots.visibilityCdf(run, out);
        } finally {
            ManagerProcess.deleteTree(work);
        }
    }
}
