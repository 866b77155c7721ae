package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import orbitkv.conformance.etcd.EtcdFixture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The soak of issue 37 item 6 as {@code scripts/soak --minutes N} runs it (lane {@code qualification}; see
 * {@link SoakRun} for the cluster, churn and events): {@code -Dsoak.minutes} (default 60) of churn, then the samples
 * (CSV), one plot per metric and the report with the verdict table are written to {@code -Dsoak.out} (scripts/soak:
 * docs/perf) as {@code soak-<N>min-*} (every 5 minutes an interim version of them), and the Managers' logs to a run directory under {@code java.io.tmpdir}. Fails
 * (so the script exits non-zero) on any mismatch, any growing series or any failed event.
 */
@Tag("qualification")
@Timeout(value = 6, unit = TimeUnit.HOURS)
class SoakHarness {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    @Test
    void soak() throws Exception {
        long minutes = Long.getLong("soak.minutes", 60);
        Path out = Path.of(System.getProperty("soak.out", System.getProperty("java.io.tmpdir")));
        String prefix = "soak-" + minutes + "min";
        SoakRun.Result result;
        Path logs = Path.of(System.getProperty("java.io.tmpdir"), "orbitkv-bench", prefix + "-" + System.currentTimeMillis());
        String title = "soak " + minutes + " min";
        try (SoakRun run = new SoakRun(ETCD, SoakRun.Config.minutes(minutes))) {
            try {
                result = run.run(interim -> {
                    try {
                        SoakReport.write(out, prefix, title + " (interim, " + interim.samples().size() + " samples)", interim);
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
            } finally {
                run.keepLogs(logs);
            }
        }
        SoakReport.text(title, result).forEach(System.out::println);
        SoakReport.write(out, prefix, title, result).forEach(p -> System.out.println("  wrote " + p));
        System.out.println("  Manager logs: " + logs);
        assertThat(result.passed()).as("soak verdict (report above)").isTrue();
    }
}
