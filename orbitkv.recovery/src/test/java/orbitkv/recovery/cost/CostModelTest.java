package orbitkv.recovery.cost;

import static orbitkv.recovery.ObservationOutcome.FAILED;
import static orbitkv.recovery.ObservationOutcome.REFUSED;
import static orbitkv.recovery.ObservationOutcome.SUCCEEDED;
import static orbitkv.recovery.ObservationOutcome.TIMED_OUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import orbitkv.membership.NodeId;
import orbitkv.recovery.CostEstimate;
import orbitkv.recovery.RouteClass;
import orbitkv.recovery.RouteKind;
import orbitkv.recovery.exec.TestObservations;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The cost model from executed whole routes (ROUTE-3, ROUTE-6; bounds INV-9). */
@Tag("unit")
class CostModelTest {
    static final RouteClass A = RouteClass.peer(RouteKind.PEER_DRAM, new NodeId("a"));
    static final RouteClass LOCAL = RouteClass.local(RouteKind.LOCAL_DRAM);

    @Test
    @DisplayName("ROUTE-3 fixed cost + bytes/s fitted exactly from two sizes; error bound 0")
    void exactFit() {
        CostModel m = new CostModel(256, 16, 0.95);
        for (int i = 0; i < 20; i++) {
            m.record(TestObservations.of(A, 4096, 100_000, SUCCEEDED, i));
            m.record(TestObservations.of(A, 8192, 150_000, SUCCEEDED, i));
        }
        CostEstimate e = m.estimate(A);
        assertThat(e.successes()).isEqualTo(40);
        assertThat(e.fixedNanos()).isCloseTo(50_000, within(1e-6));
        assertThat(e.nanosPerByte()).isCloseTo(50_000.0 / 4096, within(1e-9));
        assertThat(e.errorNanos()).isCloseTo(0, within(1e-6));
        assertThat(e.predictNanos(16384)).isCloseTo(250_000, within(1e-6));
        assertThat(e.bytesPerSecond()).isCloseTo(4096 * 1e9 / 50_000, within(1e-3));
    }

    @Test
    @DisplayName("ROUTE-3 the error bound is the quantile of absolute residuals (nearest rank)")
    void errorQuantile() {
        CostModel m = new CostModel(256, 16, 0.95);
        // one size: the fit is the mean 100,000 + 5,000 * (1/20) ... use 19 at 100 us and 1 at 200 us
        for (int i = 0; i < 19; i++) {
            m.record(TestObservations.of(A, 1000, 100_000, SUCCEEDED, i));
        }
        m.record(TestObservations.of(A, 1000, 200_000, SUCCEEDED, 19));
        CostEstimate e = m.estimate(A);
        assertThat(e.fixedNanos()).isCloseTo(105_000, within(1e-6)); // mean, no slope with one size
        assertThat(e.nanosPerByte()).isZero();
        // |residuals|: 19 x 5,000 and 1 x 95,000; rank ceil(0.95 * 20) = 19 -> 5,000
        assertThat(e.errorNanos()).isCloseTo(5_000, within(1e-6));
        CostModel strict = new CostModel(256, 16, 1.0);
        for (int i = 0; i < 19; i++) {
            strict.record(TestObservations.of(A, 1000, 100_000, SUCCEEDED, i));
        }
        strict.record(TestObservations.of(A, 1000, 200_000, SUCCEEDED, 19));
        assertThat(strict.estimate(A).errorNanos()).isCloseTo(95_000, within(1e-6));
    }

    @Test
    @DisplayName("ROUTE-3 a negative slope is clamped to a flat mean; a negative intercept to a line through 0")
    void clamps() {
        CostModel m = new CostModel(256, 16, 0.95);
        m.record(TestObservations.of(A, 1000, 300, SUCCEEDED, 0));
        m.record(TestObservations.of(A, 2000, 100, SUCCEEDED, 1));
        assertThat(m.estimate(A).nanosPerByte()).isZero();
        assertThat(m.estimate(A).fixedNanos()).isCloseTo(200, within(1e-9));
        CostModel n = new CostModel(256, 16, 0.95);
        n.record(TestObservations.of(A, 1000, 100, SUCCEEDED, 0));
        n.record(TestObservations.of(A, 2000, 300, SUCCEEDED, 1)); // fit: -100 + 0.2 x
        assertThat(n.estimate(A).fixedNanos()).isZero();
        assertThat(n.estimate(A).nanosPerByte()).isCloseTo((1000.0 * 100 + 2000.0 * 300) / (1e6 + 4e6), within(1e-12));
    }

    @Test
    @DisplayName("ROUTE-6 failures, timeouts and refusals stay in the evidence as risk and never train the time fit")
    void failuresKept() {
        CostModel m = new CostModel(256, 16, 0.95);
        for (int i = 0; i < 32; i++) {
            m.record(TestObservations.of(A, 4096, 100_000, SUCCEEDED, i));
        }
        m.record(TestObservations.of(A, 4096, 9_000_000, FAILED, 40));
        m.record(TestObservations.of(A, 4096, 50_000_000, TIMED_OUT, 41));
        m.record(TestObservations.of(A, 4096, 10_000, REFUSED, 42));
        CostEstimate e = m.estimate(A);
        assertThat(e.successes()).isEqualTo(32);
        assertThat(e.failures() + e.timeouts() + e.refusals()).isEqualTo(3);
        assertThat(e.riskRate()).isCloseTo(3.0 / 35, within(1e-12));
        assertThat(e.fixedNanos()).isCloseTo(100_000, within(1e-6));
        assertThat(e.lastObservationNanos()).isEqualTo(42);
        assertThat(e.sampled(32)).isTrue();
        assertThat(e.sampled(33)).isFalse();
    }

    @Test
    @DisplayName("INV-9 ROUTE-6 a class window keeps the newest observations and counts evictions")
    void windowBound() {
        CostModel m = new CostModel(40, 16, 0.95);
        for (int i = 0; i < 40; i++) {
            m.record(TestObservations.of(A, 4096, 100_000, SUCCEEDED, i));
        }
        for (int i = 0; i < 40; i++) {
            m.record(TestObservations.of(A, 4096, 300_000, SUCCEEDED, 100 + i));
        }
        CostEstimate e = m.estimate(A);
        assertThat(e.successes()).isEqualTo(40);
        assertThat(e.fixedNanos()).isCloseTo(300_000, within(1e-6)); // only the newest 40 remain
        assertThat(e.evicted()).isEqualTo(40);
        assertThat(m.observationsEvicted()).isEqualTo(40);
    }

    @Test
    @DisplayName("INV-9 the peer bound evicts the least recently observed peer; local classes stay")
    void peerBound() {
        CostModel m = new CostModel(8, 2, 0.95);
        m.record(TestObservations.of(LOCAL, 1, 1, SUCCEEDED, 0));
        RouteClass b = RouteClass.peer(RouteKind.PEER_DRAM, new NodeId("b"));
        RouteClass bSsd = RouteClass.peer(RouteKind.PEER_SSD, new NodeId("b"));
        RouteClass c = RouteClass.peer(RouteKind.PEER_DRAM, new NodeId("c"));
        m.record(TestObservations.of(A, 1, 1, SUCCEEDED, 10));
        m.record(TestObservations.of(b, 1, 1, SUCCEEDED, 20));
        m.record(TestObservations.of(bSsd, 1, 1, SUCCEEDED, 21));
        m.record(TestObservations.of(A, 1, 1, SUCCEEDED, 30)); // a is now newer than b
        m.record(TestObservations.of(c, 1, 1, SUCCEEDED, 40)); // third peer: b goes, both its classes
        assertThat(m.estimate(b)).isNull();
        assertThat(m.estimate(bSsd)).isNull();
        assertThat(m.estimate(A)).isNotNull();
        assertThat(m.estimate(c)).isNotNull();
        assertThat(m.estimate(LOCAL)).isNotNull();
        assertThat(m.peersEvicted()).isEqualTo(1);
        assertThat(m.peersTracked()).isEqualTo(2);
        assertThat(m.estimates()).extracting(CostEstimate::routeClass).containsExactly(LOCAL, A, c);
    }
}
