package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.SoakVerdict.Metric;
import orbitkv.conformance.manager.SoakVerdict.Status;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The 2-minute soak in the default test command (issue 37 item 6): the {@link SoakRun} of {@code scripts/soak} for 2
 * minutes (a kill -9, a SIGTERM, a fence and heal), every restored byte verified, every judged series flat; then the
 * leak hook: the run's own samples of {@code c} with a growing fake series added (a leak of one tolerance and a half
 * over the judged span) must be judged GROWING and fail the run's verdict.
 */
@Tag("gate")
@Timeout(value = 12, unit = TimeUnit.MINUTES)
class SoakGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    @Test
    @DisplayName("INV-2 INV-8 BND-1 BND-2 2-minute soak: saves, local and peer restores (TCP, shared memory), evictions, kill -9, SIGTERM, fence and heal; 0 mismatches, every judged series flat, an injected leak judged GROWING")
    void twoMinuteSoak() throws Exception {
        SoakRun.Config config = SoakRun.Config.minutes(2);
        SoakRun.Result result;
        try (SoakRun run = new SoakRun(ETCD, config)) {
            result = run.run(r -> {});
        }
        List<String> report = SoakReport.text("soak gate 2 min", result);
        report.forEach(System.out::println);
        SoakReport.write(Path.of("target", "soak-gate"), "soak-2min", "soak gate 2 min", result);
        assertThat(result.workload().mismatches).as("mismatches: %s", result.workload().mismatchNotes).isZero();
        assertThat(result.workload().blocksVerified).as("restored blocks verified").isPositive();
        assertThat(result.workload().peerRestoresTcp).isPositive();
        assertThat(result.workload().peerRestoresShm).isPositive();
        assertThat(result.eventFailures()).as("events: %s", result.events()).isZero();
        assertThat(result.events()).hasSize(3);
        assertThat(result.passed()).as(String.join("\n", report)).isTrue();

        SoakVerdict.Judgement flat = judgeC(result, config, Metric.RSS_BYTES, 0);
        assertThat(flat.status()).as(flat.row()).isEqualTo(Status.FLAT);
        double leakPerSecond = 1.5 * flat.tolerance() / flat.spanSeconds();
        SoakVerdict.Judgement leaking = judgeC(result, config, Metric.RSS_BYTES, leakPerSecond);
        assertThat(leaking.status()).as("leak hook: %s", leaking.row()).isEqualTo(Status.GROWING);
        List<SoakVerdict.Judgement> withLeak = new java.util.ArrayList<>(result.judgements());
        withLeak.add(leaking);
        assertThat(new SoakRun.Result(result.samples(), withLeak, result.workload(), result.events(),
                result.eventFailures(), result.skippedSamples()).passed()).as("a growing series fails the soak").isFalse();
    }

    /** {@code c}'s (never restarted) series of {@code metric}, plus {@code leakPerSecond} × seconds, judged. */
    private static SoakVerdict.Judgement judgeC(SoakRun.Result r, SoakRun.Config config, Metric metric, double leakPerSecond) {
        List<SoakVerdict.Point> points = r.samples().stream().filter(s -> s.node().equals("c"))
                .map(s -> new SoakVerdict.Point(s.seconds(), s.values()[metric.ordinal()] + leakPerSecond * s.seconds())).toList();
        return SoakVerdict.judge("c" + (leakPerSecond > 0 ? "+leak" : ""), metric, points, 0,
                config.warmup().toSeconds(), config.minJudged().toSeconds());
    }
}
