package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The body bytes budget with its per-client share (issue 33, INV-9): refusals by name, exact releases, a table that empties. */
@Tag("unit")
class BodyBytesBudgetTest {
    @Test
    @DisplayName("INV-9 issue 33: one client holds at most its share; others still reserve; the whole bound wins when both are exceeded; the client table empties on release")
    void perClientShare() {
        BodyBytesBudget b = new BodyBytesBudget(100, 60);
        assertThat(b.tryReserve("a", 40)).isEqualTo(BodyBytesBudget.Reservation.ADMITTED);
        assertThat(b.tryReserve("a", 30)).isEqualTo(BodyBytesBudget.Reservation.CLIENT_EXCEEDED);
        assertThat(b.tryReserve("b", 50)).isEqualTo(BodyBytesBudget.Reservation.ADMITTED);
        assertThat(b.tryReserve("c", 20)).isEqualTo(BodyBytesBudget.Reservation.TOTAL_EXCEEDED);
        assertThat(b.tryReserve("b", 20)).as("both exceeded: the whole is named").isEqualTo(BodyBytesBudget.Reservation.TOTAL_EXCEEDED);
        assertThat(b.used()).isEqualTo(90);
        assertThat(b.clients()).isEqualTo(2);
        assertThat(b.refusedPerClient()).isEqualTo(1);
        assertThat(b.refused()).isEqualTo(2);
        assertThatThrownBy(() -> b.release("a", 41)).isInstanceOf(IllegalStateException.class);
        b.release("a", 40);
        b.release("b", 50);
        assertThat(b.used()).isZero();
        assertThat(b.clients()).as("no entry without reserved bytes").isZero();
        assertThat(new BodyBytesBudget(100, 1000).perClientMax()).as("capped at the whole").isEqualTo(100);
    }
}
