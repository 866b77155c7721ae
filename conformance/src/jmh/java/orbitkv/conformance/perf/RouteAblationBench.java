package orbitkv.conformance.perf;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerProcess;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 14's route-selection ablation and local-restore overhead (PERF-5, PERF-6), never in the default run:
 * {@code scripts/bench routes} or {@code mvn -B -pl conformance -am test -Pperf-routes}; parameters are the
 * {@code bench.routes.*} properties of {@link RouteAblationHarness.Settings#fromProperties()}. The comparisons are a
 * reported result, never asserted; a run whose collection failed (a restore not complete or not byte-exact) fails
 * this test after the report is written.
 */
@Tag("qualification")
@Timeout(value = 4, unit = java.util.concurrent.TimeUnit.HOURS) // qualification runs are long; the 20 m default is for CI lanes
class RouteAblationBench {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    @Test
    void routes() throws Exception {
        RouteAblationHarness.Settings s = RouteAblationHarness.Settings.fromProperties();
        Path work = Files.createTempDirectory("orbitkv-routes-");
        try {
            RouteAblationHarness h = new RouteAblationHarness(s, BenchRun.create("routes"), ETCD, work);
            RouteAblationHarness.AblationResult a = h.ablation();
            assertThat(a.runs()).allSatisfy(r -> assertThat(r.failure()).as(r.mode() + " block " + r.block()).isNull());
            if (s.overheadRounds() > 0) {
                h.overhead();
            }
        } finally {
            ManagerProcess.deleteTree(work);
        }
    }
}
