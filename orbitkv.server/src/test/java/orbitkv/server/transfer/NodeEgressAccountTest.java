package orbitkv.server.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import orbitkv.recovery.AdmissionOutcome;
import orbitkv.recovery.AdmissionStatus;
import orbitkv.recovery.CreditRefusal;
import orbitkv.recovery.NicLane;
import orbitkv.recovery.NodeAdmission;
import orbitkv.recovery.ReturnEvidence;
import orbitkv.recovery.SubmitterKind;
import orbitkv.server.admission.NodeAdmissionService;
import orbitkv.server.config.AdmissionOptions;
import orbitkv.transfer.EgressAccount;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * issue 39 item 2 (ROUTE-11): the Manager's peer-serving egress is charged to the tx lane of its data listener's NIC
 * in the node-local admission window, beside engines' P/D WRITEs on that lane; refused by name when the lane is full;
 * returned only when the data listener completes the charge (the send's physical end).
 */
@Tag("unit")
class NodeEgressAccountTest {
    private static final NicLane LO_TX = new NicLane("lo", NicLane.Direction.TX);
    private static final NicLane LO_RX = new NicLane("lo", NicLane.Direction.RX);

    private static NodeAdmissionService node() {
        return NodeAdmissionService.start(new AdmissionOptions(true, Map.of("lo", 0L), 1_000, 0, 300, 30_000, 16, 200,
                16, 64), "127.0.0.1").orElseThrow();
    }

    private static long charged(NodeAdmissionService n, NicLane lane) {
        return n.status().lanes().stream().filter(l -> l.lane().equals(lane)).findFirst().orElseThrow().chargedBytes();
    }

    @Test
    @DisplayName("ROUTE-11 engine WRITE bytes on lo/tx reduce the egress the Manager's source may send; a full lane refuses by name and charges nothing; completion returns")
    void egressSharesTheTxLaneWithEngineWrites() throws Exception {
        try (NodeAdmissionService node = node()) {
            EgressAccount account = new NodeEgressAccount(node);
            assertThat(node.egressLane("lo")).contains(LO_TX);
            EgressAccount.Charge first = account.charge("lo", 500); // two leases: 300 + 200
            assertThat(first).isInstanceOf(EgressAccount.Charge.Held.class);
            assertThat(node.status().chargedByKind()).containsEntry(SubmitterKind.MANAGER_EGRESS, 500L)
                    .containsEntry(SubmitterKind.MANAGER_READ, 0L);
            assertThat(charged(node, LO_TX)).isEqualTo(500);
            assertThat(charged(node, LO_RX)).as("egress is not receive").isZero();

            long engine = ((AdmissionOutcome.Registered) node.register(SubmitterKind.ENGINE_WRITE, "vllm-0")).submitter();
            AdmissionOutcome.Granted w = (AdmissionOutcome.Granted) node.charge(engine, LO_TX,
                    NodeAdmission.LeaseRequest.now(300, System.nanoTime() + 1_000_000_000L), 0);
            AdmissionStatus before = node.status();
            EgressAccount.Charge refused = account.charge("lo", 300);
            assertThat(refused).isInstanceOf(EgressAccount.Charge.Refused.class);
            assertThat(((EgressAccount.Charge.Refused) refused).detail()).contains("window-full").contains("lo/tx");
            assertThat(node.status().refusals().get(CreditRefusal.WINDOW_FULL))
                    .isEqualTo(before.refusals().getOrDefault(CreditRefusal.WINDOW_FULL, 0L) + 1);
            assertThat(charged(node, LO_TX)).as("a refusal charges nothing").isEqualTo(800);

            ((EgressAccount.Charge.Held) first).complete();
            assertThat(node.status().chargedByKind()).containsEntry(SubmitterKind.MANAGER_EGRESS, 0L);
            assertThat(charged(node, LO_TX)).isEqualTo(300);
            assertThat(account.charge("lo", 300)).isInstanceOf(EgressAccount.Charge.Held.class);
            node.returnBytes(engine, w.lease(), 300, ReturnEvidence.TRANSPORT_PROGRESS);
        }
    }

    @Test
    @DisplayName("ROUTE-11 a source NIC that is not in --admission-nics is not charged")
    void unadmittedNicChargesNothing() {
        try (NodeAdmissionService node = node()) {
            EgressAccount account = new NodeEgressAccount(node);
            assertThat(node.egressLane("eth9")).isEmpty();
            assertThat(account.charge("eth9", 10_000)).isSameAs(EgressAccount.Charge.Held.FREE);
            assertThat(node.status().chargedByKind()).containsEntry(SubmitterKind.MANAGER_EGRESS, 0L);
        }
    }
}
