package orbitkv.server.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import orbitkv.recovery.AdmissionOutcome;
import orbitkv.recovery.CreditRefusal;
import orbitkv.recovery.NicLane;
import orbitkv.recovery.NodeAdmission;
import orbitkv.recovery.ReturnEvidence;
import orbitkv.recovery.SubmitterKind;
import orbitkv.server.config.AdmissionOptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * issue 39 (ROUTE-11): this Manager's peer restore READs in the node-local admission window beside engines' P/D
 * WRITEs. A route asks for room before its authorization (a lane held by others refuses it by name); each READ is
 * charged on its own, waits in the lane's scheduling order (earliest deadline first) and is refused when its deadline
 * passes while it waits. Window 1,000 B on lo/rx, no reserve, leases of at most 300 B, unpaced.
 */
@Tag("unit")
class ManagerReadAdmissionTest {
    private static final NicLane LO_RX = new NicLane("lo", NicLane.Direction.RX);
    private static final long SECOND = 1_000_000_000L;

    /** Aging 60 s: no request here ages (a paused test JVM must not turn deadline order into arrival order). */
    private static NodeAdmissionService node() {
        return NodeAdmissionService.start(new AdmissionOptions(true, Map.of("lo", 0L), 1_000, 0, 300, 30_000, 16, 60_000,
                16, 64), "127.0.0.1").orElseThrow();
    }

    private static long engine(NodeAdmissionService node) {
        return ((AdmissionOutcome.Registered) node.register(SubmitterKind.ENGINE_WRITE, "vllm-0")).submitter();
    }

    private static AdmissionOutcome.Granted engineCharge(NodeAdmissionService node, long engine, long bytes)
            throws InterruptedException {
        return (AdmissionOutcome.Granted) node.charge(engine, LO_RX,
                NodeAdmission.LeaseRequest.now(bytes, System.nanoTime() + SECOND), 0);
    }

    @Test
    @DisplayName("ROUTE-11 engine WRITE bytes reduce the room a peer route finds before its authorization: refused by name (window-full, counted), charging nothing")
    void engineChargeLeavesNoRoom() throws Exception {
        try (NodeAdmissionService node = node()) {
            assertThat(node.managerReadLane()).contains(LO_RX);
            long engine = engine(node);
            engineCharge(node, engine, 300);
            engineCharge(node, engine, 300);
            assertThat(node.managerReadRoom(500)).hasValueSatisfying(r -> {
                assertThat(r.reason()).isEqualTo(CreditRefusal.WINDOW_FULL);
                assertThat(r.detail()).contains("500 bytes do not fit beside the 600 charged");
            });
            assertThat(node.managerReadRoom(400)).isEmpty();
            assertThat(node.status().refusals()).containsEntry(CreditRefusal.WINDOW_FULL, 1L);
            assertThat(node.status().chargedByKind()).containsEntry(SubmitterKind.MANAGER_READ, 0L);
        }
    }

    @Test
    @DisplayName("ROUTE-11 queued READ charges are granted in deadline order as engine bytes return with transport progress; each READ's return frees its bytes")
    void readsWaitInDeadlineOrder() throws Exception {
        try (NodeAdmissionService node = node()) {
            long engine = engine(node);
            AdmissionOutcome.Granted a = engineCharge(node, engine, 300);
            AdmissionOutcome.Granted b = engineCharge(node, engine, 300);
            engineCharge(node, engine, 300);
            long now = System.nanoTime();
            // the later deadline has the least remaining work and arrived first: only the deadline puts urgent first
            CompletableFuture<NodeAdmissionService.ManagerCharge> bulk = node.chargeManagerReadAsync(300, now + 20 * SECOND,
                    300);
            CompletableFuture<NodeAdmissionService.ManagerCharge> urgent = node.chargeManagerReadAsync(300, now + 10 * SECOND,
                    30_000);
            assertThat(bulk).isNotDone();
            assertThat(urgent).isNotDone();
            node.returnBytes(engine, a.lease(), 300, ReturnEvidence.TRANSPORT_PROGRESS);
            assertThat(urgent.get(5, TimeUnit.SECONDS).granted()).as("the earlier deadline first").isTrue();
            assertThat(bulk).as("the later deadline still waits: 300 of 100 free").isNotDone();
            node.returnBytes(engine, b.lease(), 300, ReturnEvidence.TRANSPORT_PROGRESS);
            NodeAdmissionService.ManagerCharge bulkCharge = bulk.get(5, TimeUnit.SECONDS);
            assertThat(bulkCharge.granted()).isTrue();
            assertThat(node.status().chargedByKind()).containsEntry(SubmitterKind.MANAGER_READ, 600L);
            node.returnManagerRead(urgent.join(), 300);
            node.returnManagerReadUnused(bulkCharge, 300);
            assertThat(node.status().chargedByKind()).containsEntry(SubmitterKind.MANAGER_READ, 0L);
        }
    }

    @Test
    @DisplayName("ROUTE-11 a READ charge whose deadline passes while it waits is refused deadline-passed and charges nothing")
    void deadlinePassedWhileQueued() throws Exception {
        try (NodeAdmissionService node = node()) {
            long engine = engine(node);
            for (int i = 0; i < 3; i++) {
                engineCharge(node, engine, 300);
            }
            NodeAdmissionService.ManagerCharge c = node.chargeManagerReadAsync(300, System.nanoTime() + 50_000_000L, 300)
                    .get(10, TimeUnit.SECONDS);
            assertThat(c.granted()).isFalse();
            assertThat(c.refused().reason()).isEqualTo(CreditRefusal.DEADLINE_PASSED);
            assertThat(node.status().chargedByKind()).containsEntry(SubmitterKind.MANAGER_READ, 0L);
            assertThat(node.status().pending()).isZero();
        }
    }

    @Test
    @DisplayName("ROUTE-11 a NIC not in --admission-nics charges nothing; a wildcard host charges the first NIC")
    void laneOfThePeerHost() throws Exception {
        AdmissionOptions o = new AdmissionOptions(true, Map.of("eth9", 0L), 1_000, 0, 300, 30_000, 16, 200, 16, 64);
        try (NodeAdmissionService n = NodeAdmissionService.start(o, "127.0.0.1").orElseThrow()) {
            assertThat(n.managerReadLane()).isEmpty();
            assertThat(n.chargeManagerRead(10_000).granted()).isTrue();
            assertThat(n.managerReadRoom(10_000)).isEmpty();
            assertThat(n.chargeManagerReadAsync(10_000, System.nanoTime() + SECOND, 10_000).get(1, TimeUnit.SECONDS)
                    .leases()).isEmpty();
        }
        try (NodeAdmissionService n = NodeAdmissionService.start(o, "0.0.0.0").orElseThrow()) {
            assertThat(n.managerReadLane()).contains(new NicLane("eth9", NicLane.Direction.RX));
        }
    }
}
