package orbitkv.conformance.perf;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.testing.ContractVerdicts;
import orbitkv.conformance.manager.ManagerProcess;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The formal scaling matrix of issue 19 (BND-3 at 64 peers, DIAG-3), never in the default run: {@code scripts/bench
 * scaling} or {@code mvn -B -pl conformance -am test -Pperf-scaling}; parameters are the {@code bench.scaling.*}
 * properties of {@link ScalingHarness.Settings#fromProperties()}. A beyond-envelope cell whose refusal is not reported
 * fails the run ({@link ScalingHarness.EnvelopeViolation}); latency figures are reported, not judged here.
 */
@Tag("qualification")
@Timeout(value = 4, unit = java.util.concurrent.TimeUnit.HOURS) // qualification runs are long; the 20 m default is for CI lanes
class ScalingBench {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    @Test
    void scaling() throws Exception {
        ScalingHarness.Settings s = ScalingHarness.Settings.fromProperties();
        Path work = Files.createTempDirectory("orbitkv-scaling-");
        try {
            BenchRun run = BenchRun.create("scaling");
            List<ScalingHarness.Result> results = new ScalingHarness(s, run, ETCD, work).run();
            ContractVerdicts v = new ContractVerdicts("ScalingHarness", run::report); // a reported envelope: collection is judged
            for (ScalingHarness.Result r : results) {
                v.collected("scaling cell " + r.cell().label() + " visibility samples", r.visibilityNs().length, s.samples(), "samples");
            }
            v.enforce(); // issue 37 item 1
        } finally {
            ManagerProcess.deleteTree(work);
        }
    }
}
