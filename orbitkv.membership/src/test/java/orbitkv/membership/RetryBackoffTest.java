package orbitkv.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The one backoff (issue 18 item 5): the schedule, the cap, reset, and equal jitter within [d/2, d]. */
@Tag("unit")
class RetryBackoffTest {
    @Test
    @DisplayName("SNAP-4 MEM-6 capped exponential schedule: 50, 100, 200, ... 5000, 5000; reset starts over")
    void schedule() {
        RetryBackoff.Sequence s = new RetryBackoff(50, 5000, RetryBackoff.Jitter.NONE).sequence();
        long[] expected = {50, 100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000};
        for (long e : expected) {
            assertThat(s.nextDelayMs()).isEqualTo(e);
        }
        s.reset();
        assertThat(s.nextDelayMs()).isEqualTo(50);
        assertThat(new RetryBackoff(7, 7, RetryBackoff.Jitter.NONE).scheduledDelayMs(1_000_000)).isEqualTo(7);
        assertThat(new RetryBackoff(1, Long.MAX_VALUE, RetryBackoff.Jitter.NONE).scheduledDelayMs(200))
                .as("no overflow at large attempts").isEqualTo(Long.MAX_VALUE);
    }

    @Test
    @DisplayName("SNAP-13 equal jitter draws each delay from the upper half of the schedule's delay")
    void equalJitter() {
        RetryBackoff b = new RetryBackoff(20, 2000, RetryBackoff.Jitter.EQUAL);
        RetryBackoff.Sequence s = b.sequence();
        for (int attempt = 0; attempt < 12; attempt++) {
            long d = b.scheduledDelayMs(attempt);
            assertThat(s.nextDelayMs()).isBetween(d / 2, d);
        }
    }

    @Test
    @DisplayName("BND-6 bounds are validated and named")
    void validation() {
        assertThatThrownBy(() -> new RetryBackoff(0, 5, RetryBackoff.Jitter.NONE))
                .hasMessage("backoff minMs (0) must be >= 1 and <= maxMs (5)");
        assertThatThrownBy(() -> new RetryBackoff(10, 5, RetryBackoff.Jitter.EQUAL))
                .hasMessage("backoff minMs (10) must be >= 1 and <= maxMs (5)");
    }
}
