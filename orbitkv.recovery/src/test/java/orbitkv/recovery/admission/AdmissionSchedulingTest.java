package orbitkv.recovery.admission;

import static orbitkv.recovery.admission.AdmissionFixture.AGING;
import static orbitkv.recovery.admission.AdmissionFixture.LO_RX;
import static orbitkv.recovery.admission.AdmissionFixture.TTL;
import static orbitkv.recovery.admission.AdmissionFixture.granted;
import static orbitkv.recovery.admission.AdmissionFixture.owner;
import static orbitkv.recovery.admission.AdmissionFixture.queued;
import static orbitkv.recovery.admission.AdmissionFixture.refused;
import static orbitkv.recovery.admission.AdmissionFixture.register;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import orbitkv.recovery.AdmissionOutcome;
import orbitkv.recovery.CreditRefusal;
import orbitkv.recovery.NodeAdmission;
import orbitkv.recovery.NodeAdmission.LeaseRequest;
import orbitkv.recovery.ReturnEvidence;
import orbitkv.recovery.SubmitterKind;
import orbitkv.recovery.fixtures.ManualClock;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * DESIGN S6 scheduling of queued credits: eligible deadline, remaining required work, per-instance fairness, aging,
 * and a best request that is never overtaken (ROUTE-11).
 */
@Tag("unit")
class AdmissionSchedulingTest {
    private final ManualClock clock = new ManualClock();
    private final NodeAdmission a = owner(clock);
    private final long filler = register(a, SubmitterKind.ENGINE_WRITE, "filler");
    private final AdmissionOutcome.Granted[] fill = new AdmissionOutcome.Granted[9];

    /** Fills lo/rx's 900 usable bytes so that later requests queue. */
    private void fillWindow() {
        for (int i = 0; i < 9; i++) {
            fill[i] = granted(a.lease(filler, LO_RX, LeaseRequest.now(100, clock.getAsLong() + TTL)));
        }
    }

    private long wait(long s, long bytes, long deadlineInMs, long remaining) {
        return queued(a.lease(s, LO_RX, new LeaseRequest(bytes, clock.getAsLong() + deadlineInMs * 1_000_000L,
                remaining, true)));
    }

    /** Returns one filler batch and advances: the tickets granted now, in order. */
    private List<Long> freeOneBatch(int i) {
        a.returnBytes(filler, fill[i].lease(), 100, ReturnEvidence.TRANSPORT_PROGRESS);
        return a.advance().stream().map(o -> ((AdmissionOutcome.Granted) o).ticket()).toList();
    }

    @Test
    @DisplayName("ROUTE-11 the earliest eligible deadline is served first; a passed deadline is refused, never granted")
    void earliestDeadlineFirst() {
        fillWindow();
        long s = register(a, SubmitterKind.MANAGER_READ, "m");
        long late = wait(s, 100, 300, 100);
        long soon = wait(s, 100, 100, 100);
        long past = wait(s, 100, 10, 100);
        clock.advance(20_000_000L);
        List<AdmissionOutcome> out = a.advance();
        assertThat(out).hasSize(1);
        assertThat(refused(out.get(0)).reason()).isEqualTo(CreditRefusal.DEADLINE_PASSED);
        assertThat(refused(out.get(0)).ticket()).isEqualTo(past);
        assertThat(freeOneBatch(0)).containsExactly(soon);
        assertThat(freeOneBatch(1)).containsExactly(late);
    }

    @Test
    @DisplayName("ROUTE-11 at equal deadlines the least remaining required work goes first, then the fairer instance")
    void remainingWorkThenFairness() {
        fillWindow();
        long heavy = register(a, SubmitterKind.ENGINE_WRITE, "heavy");
        long light = register(a, SubmitterKind.ENGINE_WRITE, "light");
        long bulk = wait(heavy, 100, 400, 10_000);
        long small = wait(heavy, 100, 400, 300);
        long h = wait(heavy, 100, 400, 500);
        long l = wait(light, 100, 400, 500);
        assertThat(freeOneBatch(0)).containsExactly(small);
        // heavy now holds 100 bytes, light none: at equal deadline and work, light's instance goes first
        assertThat(freeOneBatch(1)).containsExactly(l);
        assertThat(freeOneBatch(2)).containsExactly(h);
        assertThat(freeOneBatch(3)).containsExactly(bulk);
    }

    @Test
    @DisplayName("ROUTE-11 aging: a request waiting past the aging bound is served before younger, more urgent ones")
    void agingPreventsStarvation() {
        fillWindow();
        long s = register(a, SubmitterKind.MANAGER_READ, "m");
        long old = wait(s, 100, 10_000, 100_000);
        clock.advance(AGING);
        long urgent = wait(s, 100, 100, 100);
        assertThat(freeOneBatch(0)).containsExactly(old);
        assertThat(freeOneBatch(1)).containsExactly(urgent);
    }

    @Test
    @DisplayName("ROUTE-11 the best request is never overtaken by a smaller one, nor by an immediate request")
    void headOfLineIsNeverOvertaken() {
        fillWindow();
        long s = register(a, SubmitterKind.MANAGER_READ, "m");
        a.returnBytes(filler, fill[0].lease(), 50, ReturnEvidence.TRANSPORT_PROGRESS);
        long big = wait(s, 100, 100, 100);
        long tiny = wait(s, 10, 200, 10);
        assertThat(a.advance()).isEmpty();
        assertThat(refused(a.lease(s, LO_RX, LeaseRequest.now(10, clock.getAsLong() + TTL))).reason())
                .isEqualTo(CreditRefusal.QUEUED_AHEAD);
        a.returnBytes(filler, fill[0].lease(), 50, ReturnEvidence.TRANSPORT_PROGRESS);
        assertThat(a.advance().stream().map(o -> ((AdmissionOutcome.Granted) o).ticket())).containsExactly(big);
        assertThat(freeOneBatch(1)).containsExactly(tiny);
    }

    @Test
    @DisplayName("ROUTE-11 a cancelled queued request is never granted; cancelling an answered ticket says so")
    void cancelWithdraws() {
        fillWindow();
        long s = register(a, SubmitterKind.MANAGER_READ, "m");
        long first = wait(s, 100, 1_000, 100);
        long second = wait(s, 100, 1_000, 100);
        assertThat(a.cancel(first)).isTrue();
        assertThat(a.cancel(first)).isFalse();
        assertThat(freeOneBatch(0)).containsExactly(second);
        assertThat(a.cancel(second)).isFalse();
        assertThat(a.status().pending()).isZero();
    }

    @Test
    @DisplayName("ROUTE-11 a lost submitter's queued requests end as submitter-lost at the next advance")
    void lostEndsQueued() {
        fillWindow();
        long s = register(a, SubmitterKind.ENGINE_WRITE, "gone");
        long t = wait(s, 100, 1_000, 100);
        a.lost(s);
        List<AdmissionOutcome> out = a.advance();
        assertThat(out).hasSize(1);
        assertThat(refused(out.get(0)).ticket()).isEqualTo(t);
        assertThat(refused(out.get(0)).reason()).isEqualTo(CreditRefusal.SUBMITTER_LOST);
        assertThat(a.status().pending()).isZero();
    }

    @Test
    @DisplayName("ROUTE-11 a paced lane tells when its pacer can serve the best queued request")
    void nextPacerTime() {
        long s = register(a, SubmitterKind.MANAGER_READ, "m");
        granted(a.lease(s, AdmissionFixture.ETH_RX, LeaseRequest.now(100, clock.getAsLong() + TTL)));
        assertThat(a.nextPacerNanos()).isEqualTo(-1);
        queued(a.lease(s, AdmissionFixture.ETH_RX, new LeaseRequest(90, clock.getAsLong() + TTL, 90, true)));
        long at = a.nextPacerNanos();
        assertThat(at - clock.getAsLong()).isBetween(99_000_000L, 101_000_000L); // 90 bytes at 900 bytes/s
        clock.advance(at - clock.getAsLong());
        assertThat(a.advance()).hasSize(1);
    }
}
