package orbitkv.conformance.session;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The default run's smoke of the bootstrap harness (so it cannot rot): 20,000 residences, one warm-up and three timed
 * rounds of each kind of run (into the GlobalIndex, into a null receiver, raw gRPC of the same bytes). It checks that
 * the three figures of the revised bootstrap contract are produced and well-formed, not their values; the formal
 * figures are {@code scripts/bench bootstrap} at 1,000,000 residences.
 */
@Tag("unit")
class SessionBenchHarnessSmokeTest {
    @Test
    @DisplayName("PERF-6 the bootstrap harness reports the three revised-contract figures (wall, CPU, staging and commit ns per row)")
    void smoke() throws Exception {
        new SessionBenchHarness().bootstrapVsRaw(20_000, 1, 3);
        double[] f = SessionBenchHarness.LAST_FIGURES;
        assertThat(f).hasSize(5);
        assertThat(f[0]).as("raw / null-receiver wall, percent").isFinite().isPositive();
        assertThat(f[1]).as("raw / null-receiver cpu, percent").isFinite().isPositive();
        assertThat(f[2]).as("raw / index cpu, percent").isFinite().isPositive();
        assertThat(f[3]).as("staging ns per row").isFinite().isPositive();
        assertThat(f[4]).as("commit ns per row").isFinite().isPositive();
    }
}
