package orbitkv.conformance.manager;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The soak's verdict on one sampled series (issue 37 item 6: "a verdict on each series' slope after warm-up"): the
 * least-squares slope of the samples after the life's warm-up, times the judged span, is the series' growth over the
 * run; the series is flat when that growth is at most its tolerance, {@code max(relative x median, absolute floor)}.
 * Only growth counts (a series that shrinks is not a leak). A life whose judged span is shorter than the minimum is
 * reported, not judged (a member restarted late in the run has no steady state yet).
 *
 * <p>The tolerances are stated per metric with the reason; they are wide enough for the noise of a steady Manager on a
 * loaded 2-core machine (a restore in flight at the sampling instant, a JIT or malloc arena settling) and narrow
 * enough that a leak of one object per operation (thousands of operations per run) exceeds them.
 */
public final class SoakVerdict {
    private SoakVerdict() {}

    /** The sampled series with their tolerance: growth over the judged span ≤ max(relative × median, absolute). */
    public enum Metric {
        /** C1-compiled code, the code cache and glibc arenas settle for minutes: 10 % or 48 MiB. */
        RSS_BYTES("rss_bytes", 0.10, 48 << 20),
        /** Live heap after a full GC: 10 % or 16 MiB (a Manager's working set at this load is tens of MiB). */
        HEAP_AFTER_GC_BYTES("heap_after_gc_bytes", 0.10, 16 << 20),
        /** Open descriptors: connections of one restore in flight at the instant: 10 % or 16. */
        FDS("fds", 0.10, 16),
        /** Threads: pools are bounded; a pool growing by a thread per event leaks: 10 % or 8. */
        THREADS("threads", 0.10, 8),
        /** Source pins held at the instant: at most one restore's READs are in flight (8 blocks): 8. */
        PINS("pins", 0.0, 8),
        /** Session credit outstanding plus requester receive credits held: one receive window, 8 MiB. */
        CREDITS_OUTSTANDING_BYTES("credits_outstanding_bytes", 0.0, 8 << 20),
        /** Retained journal bytes: retention is bounded (--journal-retention-bytes-max): 10 % or 2 MiB. */
        JOURNAL_BYTES("journal_bytes", 0.10, 2 << 20),
        /** Index rows of peers: bounded by the peers' DRAM (LRU), churned by saves and evictions: 10 % or 64. */
        INDEX_ROWS("index_rows", 0.10, 64),
        /**
         * InventorySessions (requester and served), one per peer each way: 4, the sessions of two peers; a peer
         * restarted inside the judged span drops its two and opens two again, which tilts the slope by up to that.
         */
        SESSIONS("sessions", 0.0, 4);

        private final String column;
        private final double relative;
        private final double absolute;

        Metric(String column, double relative, double absolute) {
            this.column = column;
            this.relative = relative;
            this.absolute = absolute;
        }

        public String column() {
            return column;
        }

        /** The tolerance at a series' median level. */
        public double tolerance(double median) {
            return Math.max(relative * Math.abs(median), absolute);
        }

        /** The tolerance as a rule, for the report. */
        public String rule() {
            return relative > 0 ? String.format(Locale.ROOT, "max(%.0f%% of median, %s)", relative * 100, fmt(absolute))
                    : fmt(absolute);
        }

        private String fmt(double v) {
            return column.endsWith("bytes") ? String.format(Locale.ROOT, "%.0f MiB", v / (1 << 20)) : String.format(Locale.ROOT, "%.0f", v);
        }
    }

    /** One sample of a series: seconds since the soak started, the value. */
    public record Point(double seconds, double value) {}

    public enum Status { FLAT, GROWING, NOT_JUDGED }

    /** One series' verdict: its judged points, span, median, growth (slope × span) and tolerance. */
    public record Judgement(String series, Metric metric, int points, double spanSeconds, double median, double growth,
                            double tolerance, Status status) {
        public String row() {
            return String.format(Locale.ROOT, "| %s | %s | %d | %.0f s | %.4g | %+.4g | %.4g (%s) | %s |", series,
                    metric.column(), points, spanSeconds, median, growth, tolerance, metric.rule(), status);
        }
    }

    public static final String HEADER = "| series | metric | samples judged | span | median | growth (slope x span) | tolerance | verdict |";

    /**
     * Judges {@code points} of one life that started at {@code lifeStart} seconds: the points from
     * {@code lifeStart + warmup} on, if they span at least {@code minSpan} seconds and number at least 3.
     */
    public static Judgement judge(String series, Metric metric, List<Point> points, double lifeStart, double warmup,
                                  double minSpan) {
        List<Point> judged = new ArrayList<>();
        for (Point p : points) {
            if (p.seconds() >= lifeStart + warmup && Double.isFinite(p.value())) {
                judged.add(p);
            }
        }
        double span = judged.isEmpty() ? 0 : judged.getLast().seconds() - judged.getFirst().seconds();
        double median = median(judged);
        if (judged.size() < 3 || span < minSpan) {
            return new Judgement(series, metric, judged.size(), span, median, Double.NaN, metric.tolerance(median), Status.NOT_JUDGED);
        }
        double growth = slope(judged) * span;
        double tolerance = metric.tolerance(median);
        return new Judgement(series, metric, judged.size(), span, median, growth, tolerance,
                growth <= tolerance ? Status.FLAT : Status.GROWING);
    }

    /** The least-squares slope of value over seconds. */
    static double slope(List<Point> points) {
        double mx = 0;
        double my = 0;
        for (Point p : points) {
            mx += p.seconds();
            my += p.value();
        }
        mx /= points.size();
        my /= points.size();
        double sxy = 0;
        double sxx = 0;
        for (Point p : points) {
            sxy += (p.seconds() - mx) * (p.value() - my);
            sxx += (p.seconds() - mx) * (p.seconds() - mx);
        }
        return sxx == 0 ? 0 : sxy / sxx;
    }

    static double median(List<Point> points) {
        if (points.isEmpty()) {
            return Double.NaN;
        }
        double[] v = points.stream().mapToDouble(Point::value).toArray();
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }
}
