package orbitkv.conformance.perf;

import java.util.Map;
import java.util.Optional;

/**
 * The P1 figures of one {@link EtcdLoadHarness} run (PERF-5, PERF-6; issue 37 froze P1 at 12x): the frozen etcd
 * publisher's and the full-domain stream's visibility p50 and p99 of the same seeded trace, and the p99 ratio. This is
 * the seam a shared verdict type consumes: figures in, {@link #passes()} against {@link #THRESHOLD}.
 *
 * @param publisherP50Ms frozen etcd publisher p50
 * @param publisherP99Ms frozen etcd publisher p99
 * @param streamingP50Ms full-domain stream p50
 * @param streamingP99Ms full-domain stream p99
 * @param samples the fewer measured samples of the two cells
 */
public record P1Figures(double publisherP50Ms, double publisherP99Ms, double streamingP50Ms, double streamingP99Ms, int samples) {
    /** Frozen in docs/performance.md (issue 37): the stream's p99 at least 12x lower than the frozen publisher's. */
    public static final double THRESHOLD = 12.0;

    /** The figures, when the run holds both the frozen publisher and the full-domain stream. */
    public static Optional<P1Figures> of(Map<EtcdLoadHarness.Mode, EtcdLoadHarness.Cell> cells) {
        EtcdLoadHarness.Cell streaming = cells.get(EtcdLoadHarness.Mode.STREAMING_FULL);
        EtcdLoadHarness.Cell frozen = cells.get(EtcdLoadHarness.Mode.ETCD_FROZEN);
        if (streaming == null || frozen == null || streaming.visibilityNs().length == 0 || frozen.visibilityNs().length == 0) {
            return Optional.empty();
        }
        Stats s = streaming.stats();
        Stats f = frozen.stats();
        return Optional.of(new P1Figures(f.p50Ms(), f.p99Ms(), s.p50Ms(), s.p99Ms(), Math.min(s.n(), f.n())));
    }

    /** Publisher p99 over stream p99. */
    public double ratio() {
        return publisherP99Ms / streamingP99Ms;
    }

    /** Whether the ratio reaches {@link #THRESHOLD}. */
    public boolean passes() {
        return ratio() >= THRESHOLD;
    }

    /** One report line: figures, threshold and verdict. */
    public String line(int owners) {
        return String.format("P1 (frozen threshold: streaming visibility p99 at least %.0fx lower than the frozen publisher at %d owners): "
                + "frozen p99 %.3f ms / streaming p99 %.3f ms = %.2fx (p50 %.3f ms vs %.3f ms, %,d samples) -> %s", THRESHOLD, owners,
                publisherP99Ms, streamingP99Ms, ratio(), publisherP50Ms, streamingP50Ms, samples, passes() ? "PASS" : "FAIL");
    }
}
