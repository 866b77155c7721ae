package orbitkv.conformance.perf;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The isolation contract's arithmetic and the run's own validity checks (PERF-3; design <em>Performance acceptance and
 * ablations</em>), as pure functions of recorded timelines so that they are tested apart from any run:
 * <ul>
 *   <li>pass: every per-run p99 ratio (pressure ÷ idle of one pair) ≤ 1.05 and the 95 % bootstrap upper bound of the
 *       paired geometric-mean ratio ≤ 1.05, resampling pairs (never requests) with a declared seed;</li>
 *   <li>validity of a pressure run: source rate within 5 % of the declared cadence; first and last publication
 *       lateness, publication gaps, source loop gaps and observer polling gaps ≤ 100 ms; an inter-burst interval below
 *       half the source period fails collection as catch-up; publications and observed install advances in all four
 *       quarters of the measured interval and an install advance in every observer window (foreground period);</li>
 *   <li>validity of an idle run: observer polling gaps ≤ 100 ms, no publication and no install advance;</li>
 *   <li>the calibration (issue 37 item 4): the same resampling over idle / idle pairs gives the statistic's noise
 *       floor ({@link #noiseFloor}: the two-sided 95 % interval, the one-sided bound, the largest {@code |ln ratio|}
 *       and the smallest bound that floor allows), reported and never judged.</li>
 * </ul>
 */
public final class IsolationRules {
    /** The contract's ratio threshold. */
    public static final double RATIO_MAX = 1.05;
    /** The bound on lateness and gaps. */
    public static final long GAP_MAX_NANOS = 100_000_000L;
    /** Source rate tolerance. */
    public static final double RATE_TOLERANCE = 0.05;
    /** Bootstrap resamples. */
    public static final int RESAMPLES = 10_000;
    /** One-sided bound: the 95th percentile of the resampled geometric means. */
    public static final double UPPER_QUANTILE = 0.95;

    private IsolationRules() {}

    // ------------------------------------------------------------------ ratios

    /** Nearest-rank p99 of nanosecond samples. */
    public static long p99(long[] nanos) {
        if (nanos.length == 0) {
            throw new IllegalArgumentException("p99 of no samples");
        }
        long[] s = nanos.clone();
        Arrays.sort(s);
        return Stats.rank(s, 0.99);
    }

    /** exp(mean(ln r)). */
    public static double geometricMean(double[] ratios) {
        double sum = 0;
        for (double r : ratios) {
            if (!(r > 0) || !Double.isFinite(r)) {
                throw new IllegalArgumentException("a ratio must be positive and finite: " + r);
            }
            sum += Math.log(r);
        }
        return Math.exp(sum / ratios.length);
    }

    /**
     * The 95 % bootstrap upper bound of the paired geometric-mean ratio: {@link #RESAMPLES} resamples of the pairs with
     * replacement (seeded), the geometric mean of each, the nearest-rank {@link #UPPER_QUANTILE} quantile of those.
     */
    public static double bootstrapUpperBound(double[] pairRatios, long seed) {
        return quantile(bootstrapMeans(pairRatios, seed), UPPER_QUANTILE);
    }

    /**
     * The geometric means of {@link #RESAMPLES} resamples of the pairs with replacement (seeded), sorted ascending: the
     * one resampling every bound of this class reads, so the one-sided bound and the calibration's interval of one
     * seed come from the same resamples.
     */
    static double[] bootstrapMeans(double[] pairRatios, long seed) {
        if (pairRatios.length == 0) {
            throw new IllegalArgumentException("no pairs");
        }
        geometricMean(pairRatios); // refuses a ratio that is not positive and finite, by name
        SplittableRandom random = new SplittableRandom(seed);
        double[] logs = new double[pairRatios.length];
        for (int i = 0; i < logs.length; i++) {
            logs[i] = Math.log(pairRatios[i]);
        }
        double[] gm = new double[RESAMPLES];
        for (int b = 0; b < RESAMPLES; b++) {
            double sum = 0;
            for (int i = 0; i < logs.length; i++) {
                sum += logs[random.nextInt(logs.length)];
            }
            gm[b] = Math.exp(sum / logs.length);
        }
        Arrays.sort(gm);
        return gm;
    }

    /** The nearest-rank {@code q} quantile of ascending {@code sorted}. */
    static double quantile(double[] sorted, double q) {
        int i = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    // ------------------------------------------------------------------ calibration (idle / idle)

    /**
     * The statistic's noise floor on this machine, from an idle-versus-idle calibration (issue 37 item 4): the same
     * per-pair p99 ratios and the same seeded resampling as {@link #verdict}, when nothing differs between the runs
     * of a pair. Reported, never judged.
     *
     * @param ratios the per-pair p99 ratios (second idle run / first idle run of a pair)
     * @param geometricMean their geometric mean
     * @param lower the two-sided 95 % bootstrap interval's lower end (nearest-rank {@value IsolationRules#LOWER_TWO_SIDED} quantile)
     * @param upper its upper end (nearest-rank {@value IsolationRules#UPPER_TWO_SIDED} quantile)
     * @param upperOneSided the bound the contract reads ({@value IsolationRules#UPPER_QUANTILE} quantile, {@link IsolationRules#bootstrapUpperBound})
     * @param maxAbsLogRatio the largest {@code |ln ratio|} of one pair: how far one equal pair strays
     */
    public record NoiseFloor(double[] ratios, double geometricMean, double lower, double upper, double upperOneSided,
            double maxAbsLogRatio) {
        /**
         * The smallest ratio bound, rounded up to 0.01, that this calibration itself meets in both of the contract's
         * criteria: every per-run ratio (either direction: {@code exp(max |ln ratio|)}) and the one-sided bound. A
         * contract bound below it fails runs in which nothing differs.
         */
        public double allowedBound() {
            double floor = Math.max(Math.exp(maxAbsLogRatio), upperOneSided);
            return Math.ceil(floor * 100 - 1e-9) / 100;
        }
    }

    /** Lower end of the calibration's two-sided interval. */
    public static final double LOWER_TWO_SIDED = 0.025;
    /** Upper end of the calibration's two-sided interval. */
    public static final double UPPER_TWO_SIDED = 0.975;

    /** The noise floor of idle / idle pair ratios (see {@link NoiseFloor}); seeded like {@link #verdict}. */
    public static NoiseFloor noiseFloor(double[] pairRatios, long seed) {
        double[] gm = bootstrapMeans(pairRatios, seed);
        double maxAbsLog = 0;
        for (double r : pairRatios) {
            maxAbsLog = Math.max(maxAbsLog, Math.abs(Math.log(r)));
        }
        return new NoiseFloor(pairRatios.clone(), geometricMean(pairRatios), quantile(gm, LOWER_TWO_SIDED), quantile(gm, UPPER_TWO_SIDED),
                quantile(gm, UPPER_QUANTILE), maxAbsLog);
    }

    /** One endpoint's verdict over a medium's pairs. */
    public record Verdict(double[] ratios, double geometricMean, double upperBound, boolean everyRunValid, boolean pass) {
        public String label() {
            return !everyRunValid ? "COLLECTION FAILED" : pass ? "PASS" : "FAIL";
        }
    }

    /** Per-run p99 ratios, their geometric mean, the bootstrap bound and the verdict. */
    public static Verdict verdict(double[] pairRatios, boolean everyRunValid, long seed) {
        double gm = geometricMean(pairRatios);
        double ub = bootstrapUpperBound(pairRatios, seed);
        boolean all = true;
        for (double r : pairRatios) {
            all &= r <= RATIO_MAX;
        }
        return new Verdict(pairRatios.clone(), gm, ub, everyRunValid, everyRunValid && all && ub <= RATIO_MAX);
    }

    /** Order of the pair with 0-based index {@code p}: ABBA / BAAB blocks, A = idle first. */
    public static boolean idleFirst(int p) {
        int m = p % 4;
        return m == 0 || m == 3;
    }

    // ------------------------------------------------------------------ validity

    /**
     * One source tick of the pressure peer.
     *
     * @param scheduledNs when the loop meant to publish
     * @param wakeNs when the loop woke for it
     * @param firstPublicationNs the publication stamp of the burst's first mutation
     * @param lastPublicationNs the publication stamp of the burst's terminal mutation
     */
    public record SourceTick(long scheduledNs, long wakeNs, long firstPublicationNs, long lastPublicationNs, long terminalSequence) {}

    /** One observer poll: its start and end and the installed sequence and stamp of the peer it read. */
    public record ObserverPoll(long startNs, long endNs, long installedSequence, long installedMonoNs) {}

    /** The checks of one run with their figures; {@code failures} empty iff valid. */
    public record Validity(boolean valid, List<String> failures, int publications, double sourceRateRatio, long firstLatenessNs,
            long lastLatenessNs, long maxPublicationGapNs, long maxLoopGapNs, long maxPollGapNs, int catchUps, int[] quarterPublications,
            int[] quarterInstallAdvances, int windows, int windowsAdvancing) {
        public String summary() {
            return String.format("%s: %d publications, rate %.4f of declared, first/last lateness %.1f/%.1f ms, max gaps: publication %.1f ms, "
                    + "source loop %.1f ms, observer poll %.1f ms; catch-ups %d; quarters publications %s installs %s; windows advancing %d/%d%s",
                    valid ? "valid" : "INVALID", publications, sourceRateRatio, firstLatenessNs / 1e6, lastLatenessNs / 1e6,
                    maxPublicationGapNs / 1e6, maxLoopGapNs / 1e6, maxPollGapNs / 1e6, catchUps, Arrays.toString(quarterPublications),
                    Arrays.toString(quarterInstallAdvances), windowsAdvancing, windows, failures.isEmpty() ? "" : " " + failures);
        }
    }

    /** The pressure run's checks over the measured interval {@code [start, end]}. */
    public static Validity pressure(List<SourceTick> ticks, List<ObserverPoll> polls, long start, long end, long periodNanos, long windowNanos) {
        List<String> fail = new ArrayList<>();
        List<SourceTick> in = new ArrayList<>();
        for (SourceTick t : ticks) {
            if (t.lastPublicationNs() >= start && t.lastPublicationNs() <= end) {
                in.add(t);
            }
        }
        double expected = (end - start) / (double) periodNanos;
        double rate = expected <= 0 ? Double.NaN : in.size() / expected;
        if (!(Math.abs(rate - 1) <= RATE_TOLERANCE)) {
            fail.add(String.format("source rate %.4f of the declared cadence (tolerance %.0f %%)", rate, RATE_TOLERANCE * 100));
        }
        long first = in.isEmpty() ? end - start : in.getFirst().firstPublicationNs() - start;
        long last = in.isEmpty() ? end - start : end - in.getLast().lastPublicationNs();
        if (first > GAP_MAX_NANOS) {
            fail.add(String.format("first publication %.1f ms after the measured start", first / 1e6));
        }
        if (last > GAP_MAX_NANOS) {
            fail.add(String.format("last publication %.1f ms before the measured end", last / 1e6));
        }
        long pubGap = 0;
        long loopGap = 0;
        int catchUps = 0;
        for (int i = 1; i < in.size(); i++) {
            long gap = in.get(i).lastPublicationNs() - in.get(i - 1).lastPublicationNs();
            pubGap = Math.max(pubGap, gap);
            if (gap < periodNanos / 2) {
                catchUps++;
            }
            loopGap = Math.max(loopGap, in.get(i).wakeNs() - in.get(i - 1).wakeNs());
        }
        if (pubGap > GAP_MAX_NANOS) {
            fail.add(String.format("publication gap %.1f ms", pubGap / 1e6));
        }
        if (loopGap > GAP_MAX_NANOS) {
            fail.add(String.format("source loop gap %.1f ms", loopGap / 1e6));
        }
        if (catchUps > 0) {
            fail.add(catchUps + " inter-burst intervals below half the source period (catch-up)");
        }
        long pollGap = pollGap(polls, start, end);
        if (pollGap > GAP_MAX_NANOS) {
            fail.add(String.format("observer polling gap %.1f ms%s", pollGap / 1e6, pollGapCause(polls, start, end)));
        }
        int[] qPub = new int[4];
        for (SourceTick t : in) {
            qPub[quarter(t.lastPublicationNs(), start, end)]++;
        }
        int[] qInst = new int[4];
        List<Long> advances = advances(polls, start, end);
        for (long t : advances) {
            qInst[quarter(t, start, end)]++;
        }
        for (int q = 0; q < 4; q++) {
            if (qPub[q] == 0) {
                fail.add("no publication in quarter " + (q + 1));
            }
            if (qInst[q] == 0) {
                fail.add("no observed install advance in quarter " + (q + 1));
            }
        }
        int windows = (int) Math.max(1, (end - start) / windowNanos);
        boolean[] adv = new boolean[windows];
        for (long t : advances) {
            int w = (int) Math.min(windows - 1, (t - start) / windowNanos);
            adv[w] = true;
        }
        int advancing = 0;
        for (boolean b : adv) {
            advancing += b ? 1 : 0;
        }
        if (advancing < windows) {
            fail.add((windows - advancing) + " of " + windows + " observer windows without an install advance");
        }
        return new Validity(fail.isEmpty(), fail, in.size(), rate, first, last, pubGap, loopGap, pollGap, catchUps, qPub, qInst, windows,
                advancing);
    }

    /** The idle run's checks: polling gaps bounded, no publication, no install advance. */
    public static Validity idle(List<SourceTick> ticks, List<ObserverPoll> polls, long start, long end, long windowNanos) {
        List<String> fail = new ArrayList<>();
        int pubs = 0;
        for (SourceTick t : ticks) {
            if (t.lastPublicationNs() >= start && t.lastPublicationNs() <= end) {
                pubs++;
            }
        }
        if (pubs > 0) {
            fail.add(pubs + " publications in the idle arm");
        }
        long pollGap = pollGap(polls, start, end);
        if (pollGap > GAP_MAX_NANOS) {
            fail.add(String.format("observer polling gap %.1f ms%s", pollGap / 1e6, pollGapCause(polls, start, end)));
        }
        int adv = advances(polls, start, end).size();
        if (adv > 0) {
            fail.add(adv + " install advances observed in the idle arm");
        }
        int windows = (int) Math.max(1, (end - start) / windowNanos);
        return new Validity(fail.isEmpty(), fail, pubs, Double.NaN, 0, 0, 0, 0, pollGap, 0, new int[4], new int[4], windows, 0);
    }

    /** The largest gap between poll starts inside {@code [start, end]}, edges included. */
    static long pollGap(List<ObserverPoll> polls, long start, long end) {
        long prev = start;
        long gap = 0;
        for (ObserverPoll p : polls) {
            if (p.startNs() < start) {
                continue;
            }
            if (p.startNs() > end) {
                break;
            }
            gap = Math.max(gap, p.startNs() - prev);
            prev = p.startNs();
        }
        return Math.max(gap, end - prev);
    }

    /**
     * Where the largest gap came from, for the report: how long the poll before it took to be answered (a slow
     * Manager) against how late the next poll started after that answer (the observer's own scheduling).
     */
    static String pollGapCause(List<ObserverPoll> polls, long start, long end) {
        ObserverPoll before = null;
        ObserverPoll worst = null;
        long gap = -1;
        for (ObserverPoll p : polls) {
            if (p.startNs() < start) {
                continue;
            }
            if (p.startNs() > end) {
                break;
            }
            if (before != null && p.startNs() - before.startNs() > gap) {
                gap = p.startNs() - before.startNs();
                worst = before;
            }
            before = p;
        }
        if (worst == null) {
            return "";
        }
        ObserverPoll next = polls.get(polls.indexOf(worst) + 1);
        return String.format(" (the poll before it was answered in %.1f ms, the next started %.1f ms after that answer)",
                (worst.endNs() - worst.startNs()) / 1e6, (next.startNs() - worst.endNs()) / 1e6);
    }

    /** The end times of polls inside {@code [start, end]} that saw a higher installed sequence than the poll before. */
    static List<Long> advances(List<ObserverPoll> polls, long start, long end) {
        List<Long> out = new ArrayList<>();
        long seen = Long.MIN_VALUE;
        for (ObserverPoll p : polls) {
            if (p.endNs() >= start && p.endNs() <= end && seen != Long.MIN_VALUE && p.installedSequence() > seen) {
                out.add(p.endNs());
            }
            seen = Math.max(seen, p.installedSequence());
        }
        return out;
    }

    private static int quarter(long t, long start, long end) {
        long len = Math.max(1, end - start);
        return (int) Math.max(0, Math.min(3, (t - start) * 4 / len));
    }
}
