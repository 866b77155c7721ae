package orbitkv.server.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class ReceiveCreditsTest {
    @Test
    @DisplayName("ROUTE-11 the receive window takes route credits while they fit, refuses by count otherwise (taking nothing), and returns them exactly")
    void boundedWindow() {
        ReceiveCredits w = new ReceiveCredits(1_000);
        assertThat(w.tryTake(600)).isTrue();
        assertThat(w.tryTake(401)).isFalse();
        assertThat(w.heldBytes()).isEqualTo(600);
        assertThat(w.refusals()).isEqualTo(1);
        assertThat(w.tryTake(400)).isTrue();
        assertThat(w.tryTake(1)).isFalse();
        w.release(600);
        assertThat(w.tryTake(600)).isTrue();
        w.release(600);
        w.release(400);
        assertThat(w.heldBytes()).isZero();
        assertThat(w.refusals()).isEqualTo(2);
    }

    @Test
    @DisplayName("ROUTE-11 misuse of the window throws: a non-positive bound or take, a release of more than is held")
    void misuseThrows() {
        assertThatThrownBy(() -> new ReceiveCredits(0)).isInstanceOf(IllegalArgumentException.class);
        ReceiveCredits w = new ReceiveCredits(10);
        assertThatThrownBy(() -> w.tryTake(0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(w.tryTake(5)).isTrue();
        assertThatThrownBy(() -> w.release(6)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> w.release(0)).isInstanceOf(IllegalStateException.class);
        assertThat(w.heldBytes()).isEqualTo(5);
    }
}
