package orbitkv.conformance.perf;

import java.util.Arrays;

/** Order statistics of nanosecond samples, reported in milliseconds (nearest-rank quantiles). */
public record Stats(int n, double p50Ms, double p99Ms, double maxMs, double minMs) {
    public static Stats of(long[] nanos) {
        if (nanos.length == 0) {
            return new Stats(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
        }
        long[] s = nanos.clone();
        Arrays.sort(s);
        return new Stats(s.length, rank(s, 0.50) / 1e6, rank(s, 0.99) / 1e6, s[s.length - 1] / 1e6, s[0] / 1e6);
    }

    /** Nearest-rank quantile: the smallest sample with at least q of the samples at or below it. */
    public static long rank(long[] sorted, double q) {
        int i = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    public static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return c.length % 2 == 1 ? c[c.length / 2] : (c[c.length / 2 - 1] + c[c.length / 2]) / 2;
    }

    public String row() {
        return String.format("%,d | %.3f | %.3f | %.3f", n, p50Ms, p99Ms, maxMs);
    }
}
