package orbitkv.conformance.perf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The calibration's arithmetic (PERF-3, issue 37 item 4): {@link IsolationRules#noiseFloor} on idle / idle ratio sets
 * whose bootstrap quantiles are known exactly. With {@code n} pairs a resample equals the smallest (largest) ratio
 * {@code n} times with probability {@code n^-n}: 25 % for two pairs and 3.7 % for three, both above the 2.5 % tail,
 * so the two-sided interval's ends are the extremes themselves; for three pairs the one-sided 95 % bound is the
 * resample of two largest and the middle one (the largest alone holds 3.7 %, with it 14.8 %). 10,000 seeded
 * resamples put each of these tails several standard errors from the quantile they decide.
 */
@Tag("unit")
class IsolationNoiseFloorTest {
    static final long SEED = 20261201L;

    /** One table row: the ratios and the exact figures expected. */
    record Row(String name, double[] ratios, double gm, double lower, double upper, double upperOneSided, double maxAbsLog, double allowed) {}

    static final List<Row> TABLE = List.of(
            new Row("nothing differs: every ratio 1.0", new double[] {1, 1, 1, 1, 1}, 1, 1, 1, 1, 0, 1.00),
            new Row("one pair: every resample is that pair", new double[] {1.02}, 1.02, 1.02, 1.02, 1.02, Math.log(1.02), 1.02),
            new Row("two pairs: the extremes are the interval", new double[] {0.95, 1.05}, Math.sqrt(0.95 * 1.05), 0.95, 1.05, 1.05,
                    -Math.log(0.95), 1.06),
            new Row("three pairs: the extremes are the interval, the bound is cbrt(1.1 x 1.1 x 1.0)", new double[] {0.9, 1.0, 1.1},
                    Math.cbrt(0.9 * 1.0 * 1.1), 0.9, 1.1, Math.cbrt(1.1 * 1.1 * 1.0), -Math.log(0.9), 1.12));

    @Test
    @DisplayName("PERF-3 calibration: the noise floor of known ratio sets (geometric mean, 2.5 % / 97.5 % interval, one-sided bound, "
            + "max |ln ratio|, the bound it allows)")
    void table() {
        for (Row row : TABLE) {
            IsolationRules.NoiseFloor f = IsolationRules.noiseFloor(row.ratios(), SEED);
            assertThat(f.geometricMean()).as(row.name() + ": geometric mean").isCloseTo(row.gm(), within(1e-12));
            assertThat(f.lower()).as(row.name() + ": 2.5 % quantile").isCloseTo(row.lower(), within(1e-12));
            assertThat(f.upper()).as(row.name() + ": 97.5 % quantile").isCloseTo(row.upper(), within(1e-12));
            assertThat(f.upperOneSided()).as(row.name() + ": one-sided 95 % bound").isCloseTo(row.upperOneSided(), within(1e-12));
            assertThat(f.maxAbsLogRatio()).as(row.name() + ": max |ln ratio|").isCloseTo(row.maxAbsLog(), within(1e-12));
            assertThat(f.allowedBound()).as(row.name() + ": the smallest bound it allows").isEqualTo(row.allowed());
        }
    }

    @Test
    @DisplayName("PERF-3 calibration: seeded, the one-sided bound is the verdict's own, and the interval brackets the geometric mean")
    void consistentWithTheVerdict() {
        double[] five = {1.01, 0.98, 1.02, 1.00, 0.99};
        IsolationRules.NoiseFloor f = IsolationRules.noiseFloor(five, SEED);
        assertThat(IsolationRules.noiseFloor(five, SEED).lower()).as("the same seed, the same interval").isEqualTo(f.lower());
        assertThat(f.upperOneSided()).isEqualTo(IsolationRules.bootstrapUpperBound(five, SEED))
                .isEqualTo(IsolationRules.verdict(five, true, SEED).upperBound());
        assertThat(f.lower()).isGreaterThan(0.98).isLessThan(f.geometricMean());
        assertThat(f.upper()).isGreaterThan(f.upperOneSided()).isLessThan(1.02);
        assertThat(f.maxAbsLogRatio()).as("|ln 0.98| > ln 1.02").isCloseTo(-Math.log(0.98), within(1e-12));
        assertThat(f.allowedBound()).as("max(1 / 0.98, the one-sided bound) = 1.0204, rounded up to 0.01").isEqualTo(1.03);
    }

    @Test
    @DisplayName("PERF-3 calibration: no pairs, or a ratio that is not positive and finite, is refused by name")
    void refusals() {
        assertThatThrownBy(() -> IsolationRules.noiseFloor(new double[0], SEED)).isInstanceOf(IllegalArgumentException.class).hasMessage("no pairs");
        assertThatThrownBy(() -> IsolationRules.noiseFloor(new double[] {1.0, 0.0}, SEED)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a ratio must be positive and finite");
        assertThatThrownBy(() -> IsolationRules.noiseFloor(new double[] {Double.NaN}, SEED)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a ratio must be positive and finite");
    }
}
