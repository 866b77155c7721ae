package orbitkv.recovery.cost;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import orbitkv.membership.NodeId;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.ObservationOutcome;
import orbitkv.recovery.RouteClass;
import orbitkv.recovery.RouteKind;
import orbitkv.recovery.exec.TestObservations;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The incremental fit equals a from-scratch fit of the window's content (seeded; replay with -Dorbitkv.seed=N). */
@Tag("unit")
class ClassWindowTest {
    @Test
    @DisplayName("ROUTE-3 ROUTE-6 incremental sums and quickselect agree with an independent recomputation over 20,000 records")
    void incrementalEqualsRecomputed() {
        long seed = Long.getLong("orbitkv.seed", System.nanoTime());
        System.out.println("ClassWindowTest seed=" + seed + " (replay: -Dorbitkv.seed=" + seed + ")");
        Random rnd = new Random(seed);
        RouteClass c = RouteClass.peer(RouteKind.PEER_SSD, new NodeId("x"));
        int window = 1 + rnd.nextInt(300);
        ClassWindow w = new ClassWindow(c, window, 0.9);
        List<long[]> all = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            long bytes = 1 + rnd.nextInt(4) * (long) (1 << 20);
            long nanos = 50_000 + bytes / 3 + rnd.nextInt(40_000);
            ObservationOutcome o = rnd.nextInt(10) == 0 ? ObservationOutcome.values()[1 + rnd.nextInt(3)] : ObservationOutcome.SUCCEEDED;
            w.record(TestObservations.of(c, bytes, nanos, o, i));
            all.add(new long[] {bytes, nanos, o.ordinal()});
            if (i % 997 == 0 || i == 19_999) {
                CostEstimate e = w.estimate();
                CostEstimate ref = reference(c, all.subList(Math.max(0, all.size() - window), all.size()), 0.9);
                assertThat(e.successes()).isEqualTo(ref.successes());
                assertThat(e.failures() + e.timeouts() + e.refusals()).isEqualTo(ref.failures());
                assertThat(e.fixedNanos()).as("seed %d at %d", seed, i).isCloseTo(ref.fixedNanos(), within(1e-3 * Math.max(1, ref.fixedNanos())));
                assertThat(e.nanosPerByte()).isCloseTo(ref.nanosPerByte(), within(1e-6 * Math.max(1e-3, ref.nanosPerByte())));
                assertThat(e.errorNanos()).isCloseTo(ref.errorNanos(), within(1e-2 + 1e-3 * ref.errorNanos()));
            }
        }
    }

    /** A direct two-pass least-squares fit with the same clamps and a full sort for the quantile. */
    static CostEstimate reference(RouteClass c, List<long[]> obs, double q) {
        List<long[]> ok = obs.stream().filter(o -> o[2] == ObservationOutcome.SUCCEEDED.ordinal()).toList();
        int n = ok.size();
        if (n == 0) {
            return new CostEstimate(c, 0, obs.size(), 0, 0, 0, 0, 0, 0, 0);
        }
        double mx = ok.stream().mapToDouble(o -> o[0]).average().orElseThrow();
        double my = ok.stream().mapToDouble(o -> o[1]).average().orElseThrow();
        double cxx = ok.stream().mapToDouble(o -> (o[0] - mx) * (o[0] - mx)).sum();
        double cxy = ok.stream().mapToDouble(o -> (o[0] - mx) * (o[1] - my)).sum();
        double slope = cxx > 0 ? cxy / cxx : 0;
        double fixed = my - slope * mx;
        if (slope < 0) {
            slope = 0;
            fixed = my;
        } else if (fixed < 0) {
            fixed = 0;
            slope = ok.stream().mapToDouble(o -> (double) o[0] * o[1]).sum() / ok.stream().mapToDouble(o -> (double) o[0] * o[0]).sum();
        }
        double f = fixed;
        double s = slope;
        double[] r = ok.stream().mapToDouble(o -> Math.abs(o[1] - (f + s * o[0]))).sorted().toArray();
        double err = r[Math.max(0, Math.min(n - 1, (int) Math.ceil(q * n) - 1))];
        return new CostEstimate(c, n, obs.size() - n, 0, 0, fixed, slope, err, 0, 0);
    }

    @Test
    @DisplayName("quickselect returns the rank-th smallest")
    void select() {
        Random rnd = new Random(11);
        for (int t = 0; t < 2_000; t++) {
            int n = 1 + rnd.nextInt(64);
            double[] a = new double[n];
            for (int i = 0; i < n; i++) {
                a[i] = rnd.nextInt(20);
            }
            double[] sorted = a.clone();
            Arrays.sort(sorted);
            int rank = rnd.nextInt(n);
            assertThat(ClassWindow.select(a.clone(), n, rank)).isEqualTo(sorted[rank]);
        }
    }
}
