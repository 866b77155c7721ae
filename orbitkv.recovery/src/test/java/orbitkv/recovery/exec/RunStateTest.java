package orbitkv.recovery.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The route life cycle (ROUTE-7, ROUTE-8): one transition method, an exception naming any illegal edge. */
@Tag("unit")
class RunStateTest {
    @Test
    @DisplayName("ROUTE-8 every edge outside the table is refused, naming both states")
    void edges() {
        Set<String> legal = Set.of("NEW>CREDITED", "NEW>REFUSED", "CREDITED>ADMITTED", "CREDITED>REFUSED", "ADMITTED>SUBMITTED",
                "ADMITTED>ABANDONED", "SUBMITTED>READY", "SUBMITTED>PAYLOAD_FAILED", "SUBMITTED>TIMED_OUT", "SUBMITTED>CANCELLED");
        for (RunState from : RunState.values()) {
            for (RunState to : RunState.values()) {
                if (legal.contains(from + ">" + to)) {
                    assertThat(from.to(to)).isEqualTo(to);
                } else {
                    assertThatThrownBy(() -> from.to(to)).isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining(from + " -> " + to);
                }
            }
        }
    }

    @Test
    @DisplayName("ROUTE-8 only post-submission states wait for drain")
    void submitted() {
        EnumSet<RunState> post = EnumSet.of(RunState.SUBMITTED, RunState.READY, RunState.PAYLOAD_FAILED, RunState.TIMED_OUT,
                RunState.CANCELLED);
        for (RunState s : RunState.values()) {
            assertThat(s.submitted()).as(s.name()).isEqualTo(post.contains(s));
        }
    }
}
