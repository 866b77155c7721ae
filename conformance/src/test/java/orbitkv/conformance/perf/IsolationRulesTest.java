package orbitkv.conformance.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The isolation contract's arithmetic and validity rules (PERF-3, PERF-6) on synthetic timelines: each rule fails when
 * its bound is crossed by one step and passes just inside it. Times are nanoseconds on one monotonic clock.
 */
@Tag("unit")
class IsolationRulesTest {
    static final long MS = 1_000_000L;
    static final long PERIOD = 17 * MS;
    static final long START = 1_000 * MS;
    static final long END = START + 8_000 * MS;
    static final long WINDOW = 1_000 * MS;

    /** Ticks every 17 ms across [START, END], publishing 1 ms after waking. */
    static List<IsolationRules.SourceTick> ticks() {
        List<IsolationRules.SourceTick> t = new ArrayList<>();
        long seq = 100;
        for (long at = START + 5 * MS; at <= END - 5 * MS; at += PERIOD) {
            seq += 16;
            t.add(new IsolationRules.SourceTick(at, at, at + MS / 2, at + MS, seq));
        }
        return t;
    }

    /** Polls every 25 ms; the installed sequence follows the ticks 5 ms later. */
    static List<IsolationRules.ObserverPoll> polls(List<IsolationRules.SourceTick> ticks) {
        List<IsolationRules.ObserverPoll> p = new ArrayList<>();
        for (long at = START - 100 * MS; at <= END + 50 * MS; at += 25 * MS) {
            long seq = 100;
            long mono = -1;
            for (IsolationRules.SourceTick t : ticks) {
                if (t.lastPublicationNs() + 5 * MS <= at) {
                    seq = t.terminalSequence();
                    mono = t.lastPublicationNs() + 5 * MS;
                }
            }
            p.add(new IsolationRules.ObserverPoll(at, at + MS, seq, mono));
        }
        return p;
    }

    @Test
    @DisplayName("PERF-3 a steady 17 ms source, 25 ms observer and advancing installs are a valid pressure run")
    void steadyRunIsValid() {
        List<IsolationRules.SourceTick> t = ticks();
        IsolationRules.Validity v = IsolationRules.pressure(t, polls(t), START, END, PERIOD, WINDOW);
        assertThat(v.failures()).isEmpty();
        assertThat(v.valid()).isTrue();
        assertThat(v.sourceRateRatio()).isCloseTo(1.0, within(0.01));
        assertThat(java.util.Arrays.stream(v.quarterPublications()).min().orElse(0)).isPositive();
        assertThat(v.windowsAdvancing()).isEqualTo(v.windows()).isEqualTo(8);
    }

    @Test
    @DisplayName("PERF-3 a publication gap over 100 ms invalidates the run (and 99 ms does not)")
    void publicationGap() {
        assertThat(gapRun(101).failures()).anySatisfy(f -> assertThat(f).startsWith("publication gap"));
        assertThat(gapRun(99).failures()).noneSatisfy(f -> assertThat(f).startsWith("publication gap"));
    }

    /** Drops the ticks inside a hole so that two publications are {@code gapMs} apart. */
    private static IsolationRules.Validity gapRun(long gapMs) {
        List<IsolationRules.SourceTick> t = new ArrayList<>(ticks());
        long holeStart = t.get(200).lastPublicationNs();
        t.removeIf(x -> x.lastPublicationNs() > holeStart && x.lastPublicationNs() < holeStart + gapMs * MS);
        int i = 0;
        while (t.get(i).lastPublicationNs() <= holeStart) {
            i++;
        }
        IsolationRules.SourceTick n = t.get(i);
        long shift = holeStart + gapMs * MS - n.lastPublicationNs();
        t.set(i, new IsolationRules.SourceTick(n.scheduledNs() + shift, n.wakeNs() + shift, n.firstPublicationNs() + shift,
                n.lastPublicationNs() + shift, n.terminalSequence()));
        return IsolationRules.pressure(t, polls(t), START, END, PERIOD, WINDOW);
    }

    @Test
    @DisplayName("PERF-3 two bursts closer than half the source period fail collection as catch-up")
    void catchUp() {
        List<IsolationRules.SourceTick> t = new ArrayList<>(ticks());
        IsolationRules.SourceTick a = t.get(100);
        t.add(101, new IsolationRules.SourceTick(a.scheduledNs(), a.wakeNs() + 8 * MS, a.firstPublicationNs() + 8 * MS,
                a.lastPublicationNs() + 8 * MS, a.terminalSequence() + 1));
        IsolationRules.Validity v = IsolationRules.pressure(t, polls(t), START, END, PERIOD, WINDOW);
        assertThat(v.catchUps()).isEqualTo(1);
        assertThat(v.valid()).isFalse();
    }

    @Test
    @DisplayName("PERF-3 a source 6 % slower than declared is invalid; 4 % is within tolerance")
    void sourceRate() {
        assertThat(rateRun(1.06).failures()).anySatisfy(f -> assertThat(f).startsWith("source rate"));
        assertThat(rateRun(1.04).failures()).noneSatisfy(f -> assertThat(f).startsWith("source rate"));
    }

    private static IsolationRules.Validity rateRun(double stretch) {
        List<IsolationRules.SourceTick> t = new ArrayList<>();
        long p = (long) (PERIOD * stretch);
        long seq = 100;
        for (long at = START + 5 * MS; at <= END - 5 * MS; at += p) {
            seq += 16;
            t.add(new IsolationRules.SourceTick(at, at, at, at + MS, seq));
        }
        return IsolationRules.pressure(t, polls(t), START, END, PERIOD, WINDOW);
    }

    @Test
    @DisplayName("PERF-3 pressure must cover all four quarters: a source that stops early is invalid")
    void quarters() {
        List<IsolationRules.SourceTick> t = new ArrayList<>(ticks());
        t.removeIf(x -> x.lastPublicationNs() > START + 6_000 * MS);
        IsolationRules.Validity v = IsolationRules.pressure(t, polls(t), START, END, PERIOD, WINDOW);
        assertThat(v.quarterPublications()[3]).isZero();
        assertThat(v.failures()).anySatisfy(f -> assertThat(f).isEqualTo("no publication in quarter 4"));
        assertThat(v.failures()).anySatisfy(f -> assertThat(f).startsWith("last publication"));
    }

    @Test
    @DisplayName("PERF-3 an observer polling gap over 100 ms invalidates both arms")
    void pollingGap() {
        List<IsolationRules.SourceTick> t = ticks();
        List<IsolationRules.ObserverPoll> p = new ArrayList<>(polls(t));
        p.removeIf(x -> x.startNs() > START + 3_000 * MS && x.startNs() < START + 3_110 * MS);
        assertThat(IsolationRules.pressure(t, p, START, END, PERIOD, WINDOW).failures()).anySatisfy(f -> assertThat(f).startsWith("observer polling gap"));
        assertThat(IsolationRules.idle(List.of(), idlePolls(p), START, END, WINDOW).failures())
                .anySatisfy(f -> assertThat(f).startsWith("observer polling gap"));
    }

    @Test
    @DisplayName("PERF-3 the largest polling gap names its cause: a slow answer or the observer's own late start")
    void pollingGapCause() {
        List<IsolationRules.ObserverPoll> slowAnswer = List.of(new IsolationRules.ObserverPoll(START, START + MS, 1, 1),
                new IsolationRules.ObserverPoll(START + 25 * MS, START + 125 * MS, 1, 1),
                new IsolationRules.ObserverPoll(START + 127 * MS, START + 128 * MS, 1, 1));
        assertThat(IsolationRules.idle(List.of(), slowAnswer, START, START + 130 * MS, WINDOW).failures()).containsExactly(
                "observer polling gap 102.0 ms (the poll before it was answered in 100.0 ms, the next started 2.0 ms after that answer)");
        List<IsolationRules.ObserverPoll> lateStart = List.of(new IsolationRules.ObserverPoll(START, START + MS, 1, 1),
                new IsolationRules.ObserverPoll(START + 105 * MS, START + 106 * MS, 1, 1));
        assertThat(IsolationRules.idle(List.of(), lateStart, START, START + 110 * MS, WINDOW).failures()).containsExactly(
                "observer polling gap 105.0 ms (the poll before it was answered in 1.0 ms, the next started 104.0 ms after that answer)");
    }

    private static List<IsolationRules.ObserverPoll> idlePolls(List<IsolationRules.ObserverPoll> p) {
        return p.stream().map(x -> new IsolationRules.ObserverPoll(x.startNs(), x.endNs(), 100, 7)).toList();
    }

    @Test
    @DisplayName("PERF-3 the idle arm is valid only without publications and without install advances")
    void idleArm() {
        List<IsolationRules.ObserverPoll> quiet = idlePolls(polls(List.of()));
        assertThat(IsolationRules.idle(List.of(), quiet, START, END, WINDOW).valid()).isTrue();
        List<IsolationRules.SourceTick> t = ticks();
        IsolationRules.Validity busy = IsolationRules.idle(t, polls(t), START, END, WINDOW);
        assertThat(busy.valid()).isFalse();
        assertThat(busy.failures()).anySatisfy(f -> assertThat(f).endsWith("publications in the idle arm"));
        assertThat(busy.failures()).anySatisfy(f -> assertThat(f).endsWith("install advances observed in the idle arm"));
    }

    @Test
    @DisplayName("PERF-3 PERF-6 verdict: every per-run ratio <= 1.05 and the seeded bootstrap bound of the paired geometric mean <= 1.05")
    void verdicts() {
        double[] good = {1.01, 0.98, 1.02, 1.00, 0.99};
        IsolationRules.Verdict v = IsolationRules.verdict(good, true, 7);
        assertThat(v.geometricMean()).isCloseTo(Math.exp((Math.log(1.01) + Math.log(0.98) + Math.log(1.02) + Math.log(0.99)) / 5), within(1e-12));
        assertThat(v.upperBound()).isBetween(v.geometricMean(), 1.02);
        assertThat(v.label()).isEqualTo("PASS");
        assertThat(IsolationRules.verdict(good, true, 7).upperBound()).as("seeded: the same bound again").isEqualTo(v.upperBound());

        double[] oneBad = {1.01, 0.98, 1.06, 1.00, 0.99};
        assertThat(IsolationRules.verdict(oneBad, true, 7).label()).as("a per-run ratio above 1.05").isEqualTo("FAIL");

        double[] drift = {1.049, 1.045, 1.048, 1.03, 1.049};
        IsolationRules.Verdict d = IsolationRules.verdict(drift, true, 7);
        assertThat(d.upperBound()).isLessThanOrEqualTo(1.05);
        assertThat(d.label()).isEqualTo("PASS");

        double[] wide = {1.04, 0.80, 1.05, 1.05, 1.05};
        assertThat(IsolationRules.verdict(wide, true, 7).upperBound()).isLessThanOrEqualTo(1.05);

        assertThat(IsolationRules.verdict(good, false, 7).label()).as("an invalid run: no verdict on figures").isEqualTo("COLLECTION FAILED");
    }

    @Test
    @DisplayName("PERF-3 order balance: pairs follow ABBA / BAAB blocks")
    void order() {
        StringBuilder b = new StringBuilder();
        for (int p = 0; p < 5; p++) {
            b.append(IsolationRules.idleFirst(p) ? "AB" : "BA");
        }
        assertThat(b.toString()).isEqualTo("ABBABAABAB");
    }
}
