package orbitkv.index.view;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import orbitkv.index.Coverage;
import orbitkv.index.IndexConfig;
import orbitkv.membership.Incarnation;
import orbitkv.membership.ProtocolClock;
import orbitkv.testing.ManualClock;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The index's freshness checks read the injected {@link ProtocolClock} (issue 25 item 1): an owner's receipt age
 * is virtual time, so coverage stays complete through exactly the freshness budget and degrades 1 ns later.
 */
@Tag("unit")
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FreshnessClockTest {
    private static final Incarnation A = Fixture.inc("a", 10);
    private static final Incarnation B = Fixture.inc("b", 20);

    @Test
    @DisplayName("issue 25 IDX-12 coverage follows the injected clock: complete through exactly the freshness budget of virtual time, PartialHints 1 ns after, complete again on fresh liveness")
    void freshnessFollowsInjectedTime() {
        ManualClock time = new ManualClock(-(1L << 62)); // a negative origin: ages are differences, never absolute readings
        Fixture f = new Fixture(IndexConfig.defaults(), adapt(time));
        long budgetNanos = TimeUnit.MILLISECONDS.toNanos(IndexConfig.defaults().freshnessBudgetMs());
        f.admit(A, B);
        f.install(A, new UUID(1, 1), 1, List.of());
        f.install(B, new UUID(2, 1), 1, List.of());
        assertThat(f.index.coverage()).isEqualTo(Coverage.CompleteAtWatermarks);

        time.advance(budgetNanos);
        assertThat(f.index.coverage()).as("both receipts exactly the budget old").isEqualTo(Coverage.CompleteAtWatermarks);
        time.advance(1);
        assertThat(f.index.coverage()).as("1 ns past the budget").isEqualTo(Coverage.PartialHints);

        f.index.observeLiveness(A, 1);
        assertThat(f.index.coverage()).as("B is still too old").isEqualTo(Coverage.PartialHints);
        f.index.observeLiveness(B, 1);
        assertThat(f.index.coverage()).isEqualTo(Coverage.CompleteAtWatermarks);
        assertThat(time.tasksRun()).as("the index arms no timer: it only reads time").isZero();
    }

    /** The test artifact's clock as the contract (the artifact depends on java.base only). */
    private static ProtocolClock adapt(ManualClock clock) {
        return new ProtocolClock() {
            @Override
            public long nanoTime() {
                return clock.nanoTime();
            }

            @Override
            public Scheduled schedule(Runnable task, long delayNanos) {
                return clock.schedule(task, delayNanos)::cancel;
            }
        };
    }
}
