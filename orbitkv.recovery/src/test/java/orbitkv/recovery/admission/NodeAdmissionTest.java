package orbitkv.recovery.admission;

import static orbitkv.recovery.admission.AdmissionFixture.ETH_RX;
import static orbitkv.recovery.admission.AdmissionFixture.ETH_TX;
import static orbitkv.recovery.admission.AdmissionFixture.LO_RX;
import static orbitkv.recovery.admission.AdmissionFixture.LO_TX;
import static orbitkv.recovery.admission.AdmissionFixture.TTL;
import static orbitkv.recovery.admission.AdmissionFixture.granted;
import static orbitkv.recovery.admission.AdmissionFixture.owner;
import static orbitkv.recovery.admission.AdmissionFixture.refused;
import static orbitkv.recovery.admission.AdmissionFixture.register;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import orbitkv.recovery.AdmissionOutcome;
import orbitkv.recovery.AdmissionPolicy;
import orbitkv.recovery.AdmissionPolicy.LaneLimits;
import orbitkv.recovery.AdmissionStatus;
import orbitkv.recovery.CreditRefusal;
import orbitkv.recovery.NicLane;
import orbitkv.recovery.NodeAdmission;
import orbitkv.recovery.NodeAdmission.LeaseRequest;
import orbitkv.recovery.ReturnEvidence;
import orbitkv.recovery.SubmitterKind;
import orbitkv.recovery.fixtures.ManualClock;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The window, reserve, pacer, evidence rules and bounds of the node-local admission owner (ROUTE-11, BND-1). */
@Tag("unit")
class NodeAdmissionTest {
    private final ManualClock clock = new ManualClock();
    private final NodeAdmission a = owner(clock);

    private AdmissionOutcome now(long s, NicLane lane, long bytes) {
        return a.lease(s, lane, LeaseRequest.now(bytes, clock.getAsLong() + TTL));
    }

    private AdmissionStatus.LaneStatus lane(NicLane id) {
        return a.status().lanes().stream().filter(l -> l.lane().equals(id)).findFirst().orElseThrow();
    }

    @Test
    @DisplayName("ROUTE-11 the window minus the reserve bounds the charge; the refusal is named and counted")
    void route11WindowAndReserve() {
        long m = register(a, SubmitterKind.MANAGER_READ, "manager");
        for (int i = 0; i < 9; i++) {
            granted(now(m, LO_RX, 100));
        }
        AdmissionOutcome.Refused r = refused(now(m, LO_RX, 1));
        assertThat(r.reason()).isEqualTo(CreditRefusal.WINDOW_FULL);
        assertThat(r.detail()).contains("900 charged of the 900 usable on lo/rx");
        assertThat(lane(LO_RX).chargedBytes()).isEqualTo(900);
        assertThat(lane(LO_RX).windowBytesMax()).isEqualTo(1_000);
        assertThat(lane(LO_TX).chargedBytes()).isZero();
        granted(now(m, LO_TX, 100)); // the other direction is its own window
        assertThat(a.status().refusals()).containsEntry(CreditRefusal.WINDOW_FULL, 1L);
    }

    @Test
    @DisplayName("ROUTE-11 engine P/D WRITE bytes charged to the same window reduce what Manager READs can take")
    void route11EngineWritesShareTheWindow() {
        long engine = register(a, SubmitterKind.ENGINE_WRITE, "vllm-0");
        long m = register(a, SubmitterKind.MANAGER_READ, "manager");
        AdmissionOutcome.Granted[] w = new AdmissionOutcome.Granted[8];
        for (int i = 0; i < 8; i++) {
            w[i] = granted(now(engine, LO_RX, 100));
        }
        granted(now(m, LO_RX, 100));
        assertThat(refused(now(m, LO_RX, 100)).reason()).isEqualTo(CreditRefusal.WINDOW_FULL);
        assertThat(a.status().chargedByKind()).containsEntry(SubmitterKind.ENGINE_WRITE, 800L)
                .containsEntry(SubmitterKind.MANAGER_READ, 100L);
        a.returnBytes(engine, w[0].lease(), 100, ReturnEvidence.TRANSPORT_PROGRESS);
        granted(now(m, LO_RX, 100));
        assertThat(a.status().chargedByKind()).containsEntry(SubmitterKind.ENGINE_WRITE, 700L);
    }

    @Test
    @DisplayName("ROUTE-11 each NIC and direction has its own pacer; a paced lane grants again after refill")
    void route11PacerPerLaneAndDirection() {
        long m = register(a, SubmitterKind.MANAGER_READ, "manager");
        granted(now(m, ETH_RX, 100)); // the burst: one batch
        assertThat(refused(now(m, ETH_RX, 100)).reason()).isEqualTo(CreditRefusal.PACED);
        granted(now(m, ETH_TX, 100));
        granted(now(m, LO_RX, 100));
        granted(now(m, LO_RX, 100)); // lo is unpaced
        clock.advance(50_000_000L); // 45 bytes at 900 bytes/s
        assertThat(refused(now(m, ETH_RX, 100)).reason()).isEqualTo(CreditRefusal.PACED);
        clock.advance(62_000_000L); // 112 ms: 100.8 bytes
        granted(now(m, ETH_RX, 100));
    }

    @Test
    @DisplayName("ROUTE-11 a credit expiry never replenishes capacity: an unspent return after expiry is refused")
    void route11ExpiryNeverReplenishes() {
        long e = register(a, SubmitterKind.ENGINE_WRITE, "sglang-1");
        AdmissionOutcome.Granted g = granted(now(e, LO_RX, 100));
        AdmissionOutcome.Granted h = granted(now(e, LO_RX, 100));
        a.returnBytes(e, h.lease(), 40, ReturnEvidence.NEVER_SUBMITTED); // live, unexpired: trusted
        clock.advance(TTL);
        a.advance();
        assertThat(lane(LO_RX).quarantinedBytes()).isEqualTo(160);
        AdmissionOutcome.Refused r = refused(a.returnBytes(e, g.lease(), 100, ReturnEvidence.NEVER_SUBMITTED));
        assertThat(r.reason()).isEqualTo(CreditRefusal.UNSPENT_RETURN_UNTRUSTED);
        assertThat(lane(LO_RX).chargedBytes()).isEqualTo(160);
        a.returnBytes(e, g.lease(), 100, ReturnEvidence.TRANSPORT_PROGRESS); // evidence still returns
        assertThat(lane(LO_RX).chargedBytes()).isEqualTo(60);
        assertThat(lane(LO_RX).quarantinedBytes()).isEqualTo(60);
        assertThat(a.status().expiredLeases()).isEqualTo(2);
    }

    @Test
    @DisplayName("ROUTE-11 a lost submitter's uncertain work stays charged until termination evidence")
    void route11LostSubmitterStaysCharged() {
        long e = register(a, SubmitterKind.ENGINE_WRITE, "vllm-3");
        AdmissionOutcome.Granted g = granted(now(e, LO_TX, 100));
        granted(now(e, ETH_TX, 100));
        a.lost(e);
        a.lost(e);
        assertThat(lane(LO_TX).quarantinedBytes()).isEqualTo(100);
        assertThat(refused(now(e, LO_TX, 1)).reason()).isEqualTo(CreditRefusal.SUBMITTER_LOST);
        assertThat(refused(a.returnBytes(e, g.lease(), 100, ReturnEvidence.NEVER_SUBMITTED)).reason())
                .isEqualTo(CreditRefusal.UNSPENT_RETURN_UNTRUSTED);
        assertThat(a.status().lostSubmitters()).isEqualTo(1);
        assertThat(a.terminated(e)).isEqualTo(200);
        assertThat(lane(LO_TX).chargedBytes()).isZero();
        assertThat(lane(ETH_TX).quarantinedBytes()).isZero();
        assertThat(a.status().submitters()).isZero();
        assertThat(a.status().leases()).isZero();
    }

    @Test
    @DisplayName("BND-1 submitters, leases and the queue are bounded with named, counted refusals")
    void bnd1Bounds() {
        NodeAdmission small = NodeAdmission.create(AdmissionFixture.policy(1, 2, 3), clock);
        long s = register(small, SubmitterKind.ENGINE_WRITE, "a");
        register(small, SubmitterKind.ENGINE_WRITE, "b");
        assertThat(refused(small.register(SubmitterKind.ENGINE_WRITE, "c")).reason())
                .isEqualTo(CreditRefusal.SUBMITTERS_FULL);
        for (int i = 0; i < 3; i++) {
            granted(small.lease(s, LO_RX, LeaseRequest.now(10, clock.getAsLong() + TTL)));
        }
        assertThat(refused(small.lease(s, LO_RX, LeaseRequest.now(10, clock.getAsLong() + TTL))).reason())
                .isEqualTo(CreditRefusal.LEASES_FULL);
        LeaseRequest wait = new LeaseRequest(10, clock.getAsLong() + TTL, 10, true);
        AdmissionFixture.queued(small.lease(s, LO_RX, wait));
        assertThat(refused(small.lease(s, LO_TX, wait)).reason()).isEqualTo(CreditRefusal.QUEUE_FULL);
        assertThat(small.status().refusals()).containsEntry(CreditRefusal.QUEUE_FULL, 1L)
                .containsEntry(CreditRefusal.LEASES_FULL, 1L).containsEntry(CreditRefusal.SUBMITTERS_FULL, 1L);
    }

    @Test
    @DisplayName("bad input gets a clear error and changes no state")
    void badInputChangesNothing() {
        long s = register(a, SubmitterKind.ENGINE_WRITE, "vllm-0");
        AdmissionOutcome.Granted g = granted(now(s, LO_RX, 50));
        AdmissionStatus before = a.status();
        assertThatThrownBy(() -> now(s, LO_RX, 101)).hasMessageContaining("exceeds the lease batch of 100");
        assertThatThrownBy(() -> now(s, new NicLane("eth9", NicLane.Direction.RX), 1))
                .hasMessageContaining("not admitted");
        assertThatThrownBy(() -> now(999, LO_RX, 1)).hasMessageContaining("not registered");
        assertThatThrownBy(() -> a.returnBytes(s, g.lease(), 51, ReturnEvidence.TRANSPORT_PROGRESS))
                .hasMessageContaining("50 outstanding");
        assertThatThrownBy(() -> a.returnBytes(s + 1, g.lease(), 1, ReturnEvidence.TRANSPORT_PROGRESS))
                .hasMessageContaining("another submitter");
        assertThatThrownBy(() -> a.returnBytes(s, 12345, 1, ReturnEvidence.TRANSPORT_PROGRESS))
                .hasMessageContaining("not outstanding");
        assertThatThrownBy(() -> a.register(SubmitterKind.ENGINE_WRITE, "bad name"))
                .hasMessageContaining("printable");
        assertThatThrownBy(() -> new LeaseRequest(0, 0, 0, false)).hasMessageContaining(">= 1");
        assertThat(a.status()).isEqualTo(before);
    }

    @Test
    @DisplayName("the policy names both sides of a broken relation")
    void policyValidation() {
        LaneLimits tight = new LaneLimits(100, 0, 10);
        assertThatThrownBy(() -> new AdmissionPolicy(Map.of(LO_RX, tight), 100, 1, 1, 1, 1, 1))
                .hasMessageContaining("usable window 90 bytes (window 100 minus 10 % reserve)")
                .hasMessageContaining("one lease batch of 100 bytes");
        assertThatThrownBy(() -> new LaneLimits(100, 0, 91)).hasMessageContaining("0..90");
        assertThatThrownBy(() -> new AdmissionPolicy(Map.of(), 1, 1, 1, 1, 1, 1)).hasMessageContaining("1..64");
        assertThatThrownBy(() -> new NicLane("this-name-is-too-long", NicLane.Direction.RX))
                .hasMessageContaining("1..15");
    }
}
