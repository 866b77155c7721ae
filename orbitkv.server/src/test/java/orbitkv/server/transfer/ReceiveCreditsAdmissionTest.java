package orbitkv.server.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Optional;
import orbitkv.recovery.AdmissionOutcome;
import orbitkv.recovery.NicLane;
import orbitkv.recovery.NodeAdmission;
import orbitkv.recovery.ReturnEvidence;
import orbitkv.recovery.SubmitterKind;
import orbitkv.server.admission.NodeAdmissionService;
import orbitkv.server.config.AdmissionOptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * issue 39 (ROUTE-11): the Manager's receive credits are charged to the node-local admission window beside engines'
 * P/D WRITEs, so that an engine's charge reduces the window Manager READs see, and returned at release.
 */
@Tag("unit")
class ReceiveCreditsAdmissionTest {
    private static final NicLane LO_RX = new NicLane("lo", NicLane.Direction.RX);

    private static NodeAdmissionService node() {
        return NodeAdmissionService.start(new AdmissionOptions(true, Map.of("lo", 0L), 1_000, 0, 300, 30_000, 16, 200,
                16, 64), "127.0.0.1").orElseThrow();
    }

    @Test
    @DisplayName("ROUTE-11 engine WRITE bytes reduce the window Manager READs see; a release returns the node charge")
    void engineChargeRefusesManagerReads() throws Exception {
        try (NodeAdmissionService node = node()) {
            assertThat(node.managerReadLane()).contains(LO_RX);
            ReceiveCredits credits = new ReceiveCredits(10_000, Optional.of(node));
            long engine = ((AdmissionOutcome.Registered) node.register(SubmitterKind.ENGINE_WRITE, "vllm-0")).submitter();
            AdmissionOutcome.Granted w = (AdmissionOutcome.Granted) node.charge(engine, LO_RX,
                    NodeAdmission.LeaseRequest.now(300, System.nanoTime() + 1_000_000_000L), 0);
            node.charge(engine, LO_RX, NodeAdmission.LeaseRequest.now(300, System.nanoTime() + 1_000_000_000L), 0);
            assertThat(credits.tryTake(500)).as("500 of 1000 fit beside 600 engine bytes? no").isFalse();
            assertThat(credits.heldBytes()).isZero();
            assertThat(credits.nodeRefusals()).isEqualTo(1);
            assertThat(credits.refusalDetail(500)).contains("node admission refused 500 bytes").contains("window-full");
            assertThat(credits.tryTake(400)).isTrue(); // two leases: 300 + 100
            assertThat(node.status().chargedByKind()).containsEntry(SubmitterKind.MANAGER_READ, 400L);
            node.returnBytes(engine, w.lease(), 300, ReturnEvidence.TRANSPORT_PROGRESS);
            assertThat(credits.tryTake(300)).isTrue();
            credits.release(400);
            credits.release(300);
            assertThat(node.status().chargedByKind()).containsEntry(SubmitterKind.MANAGER_READ, 0L);
            assertThat(node.status().lanes().stream().filter(l -> l.lane().equals(LO_RX)).findFirst().orElseThrow()
                    .chargedBytes()).isEqualTo(300);
        }
    }

    @Test
    @DisplayName("ROUTE-11 a NIC not in --admission-nics charges nothing; a wildcard host charges the first NIC")
    void laneOfThePeerHost() {
        AdmissionOptions o = new AdmissionOptions(true, Map.of("eth9", 0L), 1_000, 0, 300, 30_000, 16, 200, 16, 64);
        try (NodeAdmissionService n = NodeAdmissionService.start(o, "127.0.0.1").orElseThrow()) {
            assertThat(n.managerReadLane()).isEmpty();
            assertThat(n.chargeManagerRead(10_000).granted()).isTrue();
        }
        try (NodeAdmissionService n = NodeAdmissionService.start(o, "0.0.0.0").orElseThrow()) {
            assertThat(n.managerReadLane()).contains(new NicLane("eth9", NicLane.Direction.RX));
        }
    }
}
