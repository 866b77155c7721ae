package orbitkv.conformance.perf;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.testing.ContractVerdicts;
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
            Plots.visibilityCdf(run, out);
            ContractVerdicts v = new ContractVerdicts("VisibilityHarness (PERF-2 collection)", run::report);
            for (VisibilityHarness.Endpoint e : VisibilityHarness.Endpoint.values()) {
                List<VisibilityHarness.Sample> l = out.getOrDefault(e, List.of());
                v.collected("visibility " + e.label + " warm-up samples", l.stream().filter(VisibilityHarness.Sample::warmup).count(), s.warmup(), "samples");
                v.collected("visibility " + e.label + " measured samples", l.stream().filter(x -> !x.warmup()).count(), s.samples(), "samples");
            }
            v.enforce(); // too few samples on any endpoint is COLLECTION FAILED and fails the run (issue 37 item 1)
        } finally {
            ManagerProcess.deleteTree(work);
        }
    }
}
