package orbitkv.conformance.perf;

import java.util.Map;
import orbitkv.conformance.etcd.EtcdFixture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The formal P1/P2 comparison and the publisher and stream ablations (PERF-5, PERF-6), never in the default run:
 * {@code scripts/bench p1} or {@code mvn -B -pl conformance -am test -Pperf-p1}; parameters are the
 * {@code bench.p1.*} properties of {@link EtcdLoadHarness.Settings#fromProperties()}. Verdicts are printed against the
 * thresholds frozen in docs/performance.md; any verdict but PASS fails the run (issue 37 item 1).
 */
@Tag("qualification")
@Timeout(value = 4, unit = java.util.concurrent.TimeUnit.HOURS) // qualification runs are long; the 20 m default is for CI lanes
class EtcdLoadBench {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    @Test
    void p1() throws Exception {
        EtcdLoadHarness.Settings s = EtcdLoadHarness.Settings.fromProperties();
        EtcdLoadHarness h = new EtcdLoadHarness(s, BenchRun.create("p1"), ETCD);
        Map<EtcdLoadHarness.Mode, EtcdLoadHarness.Cell> cells = h.run();
        cells.forEach((m, c) -> {
            if (m != EtcdLoadHarness.Mode.IDLE_CONTROL) {
                h.verdicts().collected(m.label + " visibility samples", c.visibilityNs().length, s.samples(), "samples");
            }
        });
        h.verdicts().enforce(); // any FAIL or COLLECTION FAILED fails the run (issue 37 item 1)
    }
}
