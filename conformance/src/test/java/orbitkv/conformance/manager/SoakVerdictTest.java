package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleUnaryOperator;
import orbitkv.conformance.manager.SoakVerdict.Metric;
import orbitkv.conformance.manager.SoakVerdict.Point;
import orbitkv.conformance.manager.SoakVerdict.Status;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The soak's slope verdict with injected series (issue 37 item 6): flat, noisy, sawtooth, leaking, short. */
@Tag("unit")
class SoakVerdictTest {
    private static final double MIB = 1 << 20;

    private static List<Point> series(double from, double to, DoubleUnaryOperator value) {
        List<Point> out = new ArrayList<>();
        for (double t = from; t <= to; t += 10) {
            out.add(new Point(t, value.applyAsDouble(t)));
        }
        return out;
    }

    @Test
    void aSteadySeriesWithNoiseAndSawtoothIsFlat() {
        List<Point> rss = series(0, 3600, t -> 300 * MIB + ((long) t / 10 % 7) * 4 * MIB);
        assertThat(SoakVerdict.judge("c", Metric.RSS_BYTES, rss, 0, 180, 600).status()).isEqualTo(Status.FLAT);
        List<Point> journal = series(0, 3600, t -> (t % 600) / 600 * 3 * MIB); // reset by each heal
        assertThat(SoakVerdict.judge("c", Metric.JOURNAL_BYTES, journal, 0, 180, 600).status()).isEqualTo(Status.FLAT);
    }

    @Test
    void aWarmUpRampIsNotJudged() {
        List<Point> rss = series(0, 3600, t -> t < 600 ? t * MIB : 600 * MIB);
        assertThat(SoakVerdict.judge("c", Metric.RSS_BYTES, rss, 0, 600, 600).status()).isEqualTo(Status.FLAT);
        assertThat(SoakVerdict.judge("c", Metric.RSS_BYTES, rss, 0, 0, 600).status()).isEqualTo(Status.GROWING);
    }

    @Test
    void aLeakBeyondTheToleranceIsGrowing() {
        List<Point> threads = series(0, 3600, t -> 60 + t / 300); // one thread per 5 minutes: 11 over the judged span
        SoakVerdict.Judgement j = SoakVerdict.judge("a-0", Metric.THREADS, threads, 0, 180, 600);
        assertThat(j.status()).as(j.row()).isEqualTo(Status.GROWING);
        assertThat(j.growth()).isGreaterThan(j.tolerance());
        List<Point> heap = series(0, 3600, t -> 40 * MIB + t * 8 * 1024); // 8 KiB per second, 27 MiB over the span
        assertThat(SoakVerdict.judge("c", Metric.HEAP_AFTER_GC_BYTES, heap, 0, 180, 600).status()).isEqualTo(Status.GROWING);
    }

    @Test
    void aShrinkingSeriesIsNotALeak() {
        List<Point> fds = series(0, 3600, t -> 400 - t / 20);
        assertThat(SoakVerdict.judge("c", Metric.FDS, fds, 0, 180, 600).status()).isEqualTo(Status.FLAT);
    }

    @Test
    void aShortLifeIsReportedNotJudged() {
        List<Point> pins = series(3000, 3300, t -> t);
        SoakVerdict.Judgement j = SoakVerdict.judge("b-7", Metric.PINS, pins, 3000, 180, 600);
        assertThat(j.status()).isEqualTo(Status.NOT_JUDGED);
        assertThat(j.row()).contains("NOT_JUDGED").contains("b-7");
    }
}
