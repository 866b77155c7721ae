package orbitkv.inventory.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class CreditLedgerTest {
    @Test
    @DisplayName("SES-13 a contiguous ACK returns exactly the recorded bytes once; control frames ledger nothing")
    void contiguousAckReturnsExactBytesOnce() {
        CreditLedger l = new CreditLedger(1000, 10);
        l.noteSent(1); // OpenAccepted
        l.charge(2, 300);
        l.charge(3, 200);
        l.noteSent(4); // Liveness
        l.charge(5, 400);
        assertThat(l.outstandingBytes()).isEqualTo(900);
        assertThat(l.ack(3)).isInstanceOfSatisfying(CreditLedger.AckOutcome.Returned.class, r -> assertThat(r.bytes()).isEqualTo(500));
        assertThat(l.ack(3)).isInstanceOf(CreditLedger.AckOutcome.Duplicate.class);
        assertThat(l.ack(2)).isInstanceOf(CreditLedger.AckOutcome.Duplicate.class);
        assertThat(l.outstandingBytes()).isEqualTo(400);
        assertThat(l.ack(4)).isInstanceOfSatisfying(CreditLedger.AckOutcome.Returned.class, r -> assertThat(r.bytes()).isZero());
        assertThat(l.ack(5)).isInstanceOfSatisfying(CreditLedger.AckOutcome.Returned.class, r -> assertThat(r.bytes()).isEqualTo(400));
        assertThat(l.returnedBytes()).isEqualTo(900);
        assertThat(l.duplicateAcks()).isEqualTo(2);
        assertThat(l.peakOutstandingBytes()).isEqualTo(900);
    }

    @Test
    @DisplayName("SES-13 a fabricated (future) ACK returns nothing and is reported")
    void futureAckNeverEnlargesTheWindow() {
        CreditLedger l = new CreditLedger(1000, 10);
        l.charge(1, 600);
        assertThat(l.ack(2)).isInstanceOfSatisfying(CreditLedger.AckOutcome.Future.class, f -> assertThat(f.lastSentFrame()).isEqualTo(1));
        assertThat(l.ack(-5)).isInstanceOf(CreditLedger.AckOutcome.Future.class);
        assertThat(l.outstandingBytes()).isEqualTo(600);
        assertThat(l.futureAcks()).isEqualTo(2);
        assertThat(l.full(500)).isTrue();
        assertThat(l.full(400)).isFalse();
    }

    @Test
    @DisplayName("SES-13 charging beyond the byte or frame window, or out of frame order, is refused by name")
    void misuseThrows() {
        CreditLedger l = new CreditLedger(1000, 2);
        l.charge(1, 100);
        assertThatThrownBy(() -> l.charge(1, 100)).isInstanceOf(IllegalStateException.class).hasMessageContaining("not above");
        l.charge(2, 100);
        assertThat(l.full(1)).as("frame-count bound").isTrue();
        assertThatThrownBy(() -> l.charge(3, 100)).isInstanceOf(IllegalStateException.class).hasMessageContaining("credit window");
        CreditLedger bytes = new CreditLedger(100, 10);
        assertThatThrownBy(() -> bytes.charge(1, 101)).isInstanceOf(IllegalStateException.class).hasMessageContaining("100 bytes");
        assertThatThrownBy(() -> new CreditLedger(0, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
