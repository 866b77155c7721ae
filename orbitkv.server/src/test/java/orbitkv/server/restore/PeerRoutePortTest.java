package orbitkv.server.restore;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.PrefixStop;
import orbitkv.recovery.Route;
import orbitkv.recovery.RouteBlock;
import orbitkv.recovery.RouteSource;
import orbitkv.recovery.TransferPorts;
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import orbitkv.transfer.AuthorizeOutcome;
import orbitkv.transfer.BlockResult;
import orbitkv.transfer.ReadFailure;
import orbitkv.transfer.ReadResult;
import orbitkv.transfer.RefusalReason;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The peer route port and its pipelined READs against a fake transfer engine (no Netty, no sockets): receive credits
 * before the Authorize (ROUTE-11), the route's READs bounded by {@code --restore-route-reads-in-flight-max} and its
 * credits, a failed READ cancels the rest and drains only after every READ terminated (ROUTE-8, INV-8), a partial
 * grant released at once (INV-2).
 */
@Tag("unit")
@Timeout(60)
class PeerRoutePortTest {
    private static final int SIZE = 1000;
    private static final Namespace NS = Namespace.utf8("ns");

    @TempDir
    Path dir;
    private LocalTiers tiers;
    private final FakeEngine engine = new FakeEngine();
    private final RestoreNotes notes = new RestoreNotes();

    @BeforeEach
    void open() throws Exception {
        ResidencySequence sequence = new ResidencySequence();
        tiers = new LocalTiers(DramTier.open(dir, 256 * 1024, 64, sequence), null, sequence, new CopyOutBudget(64 * 1024));
    }

    @AfterEach
    void close() throws Exception {
        assertThat(tiers.copyOut().heldBytes()).as("every record byte returned to the budget").isZero();
        tiers.close();
    }

    private static Route route(int blocks) {
        List<RouteBlock> list = new ArrayList<>();
        for (int i = 0; i < blocks; i++) {
            list.add(new RouteBlock(new StateKey(NS, new byte[] {(byte) i}), 7, SIZE, false));
        }
        return new Route(new RouteSource.Peer(FakeEngine.SOURCE, Medium.DRAM), 0, list);
    }

    private RestorePorts ports(RestoreTransfer t) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        PeerRoutePort peer = new PeerRoutePort(t, null, notes, t.defaultBackend(),
                () -> Math.max(0, (deadline - System.nanoTime()) / 1_000_000), RestoreStages.OFF);
        return new RestorePorts(tiers, Optional.of(t), UnpooledByteBufAllocator.DEFAULT, 1 << 20, notes,
                new LocalRoutePort(tiers, notes), Optional.of(peer), RestoreStages.OFF);
    }

    private static RestoreRecords held(TransferPorts.CreditOutcome<RestoreRecords> c) {
        assertThat(c).isInstanceOf(TransferPorts.CreditOutcome.Held.class);
        return ((TransferPorts.CreditOutcome.Held<RestoreRecords>) c).credit().destination();
    }

    @Test
    @DisplayName("ROUTE-11 a route's READs stay within --restore-route-reads-in-flight-max; each record is its header, then the READ's bytes")
    void pipelinedWithinTheRouteBound() throws Exception {
        RestoreTransfer t = engine.transfer(1 << 20, 2, true);
        RestorePorts ports = ports(t);
        Route route = route(5);
        RestoreRecords dst = held(ports.credits(route));
        assertThat(dst.creditBytes).as("the 2 largest blocks").isEqualTo(2L * SIZE);
        assertThat(t.receiveCredits().heldBytes()).isEqualTo(2L * SIZE);
        var granted = (TransferPorts.GrantOutcome.Granted<RestoreRecords>) ports.authorize(route, 0);
        TransferPorts.ReadSubmission sub = granted.grant().read(dst);
        assertThat(engine.readsSubmitted()).as("two at once, in order").isEqualTo(2);
        for (int i = 0; i < 5; i++) {
            assertThat(sub.ready()).isNotDone();
            engine.read(i).complete((byte) (0x40 + i));
        }
        assertThat(engine.inFlightPeak.get()).isEqualTo(2);
        assertThat(sub.ready().get()).isInstanceOf(TransferPorts.ReadyOutcome.Ready.class);
        assertThat(sub.drained()).isDone();
        for (int i = 0; i < 5; i++) {
            ByteBuf rec = dst.records.get(i);
            assertThat(rec.readableBytes()).isEqualTo(RecordHeader.BYTES + 1 + SIZE);
            assertThat(rec.getShort(0)).isEqualTo((short) 1);
            assertThat(rec.getByte(2)).isEqualTo((byte) i);
            assertThat(rec.getInt(3)).isEqualTo(SIZE);
            assertThat(rec.getByte(RecordHeader.BYTES + 1 + SIZE - 1)).isEqualTo((byte) (0x40 + i));
        }
        granted.grant().release();
        dst.release(); // the executor's release after drain: credits return
        assertThat(t.receiveCredits().heldBytes()).isZero();
        dst.abandon(); // never delivered: the records are freed
        assertThat(dst.isFreed()).isTrue();
    }

    @Test
    @DisplayName("ROUTE-8 INV-8 a failed READ cancels the rest; the route drains only when every READ terminated")
    void failureCancelsAndDrainsLast() throws Exception {
        RestoreTransfer t = engine.transfer(1 << 20, 3, true);
        RestorePorts ports = ports(t);
        Route route = route(4);
        RestoreRecords dst = held(ports.credits(route));
        var granted = (TransferPorts.GrantOutcome.Granted<RestoreRecords>) ports.authorize(route, 0);
        TransferPorts.ReadSubmission sub = granted.grant().read(dst);
        assertThat(engine.readsSubmitted()).isEqualTo(3);
        engine.read(1).end(new ReadResult.Failed(ReadFailure.CHECKSUM_MISMATCH, "crc"));
        assertThat(sub.ready().get()).isEqualTo(new TransferPorts.ReadyOutcome.PayloadFailure("checksum-mismatch",
                new ReadResult.Failed(ReadFailure.CHECKSUM_MISMATCH, "crc").toString()));
        assertThat(engine.read(0).cancelled()[0]).isTrue();
        assertThat(engine.read(2).cancelled()[0]).isTrue();
        assertThat(engine.readsSubmitted()).as("nothing submitted after the failure").isEqualTo(3);
        assertThat(sub.drained()).as("every READ terminated (cancelled ones included)").isDone();
        assertThat(notes.stop(PrefixStop.PAYLOAD_FAILURE)).isEqualTo("payload-failure failure=checksum-mismatch");
        dst.release();
        dst.abandon();
        assertThat(t.receiveCredits().heldBytes()).isZero();
    }

    @Test
    @DisplayName("INV-2 a partial grant is released at once and refused for the refused keys only")
    void partialGrantReleased() {
        engine.authorize = r -> new AuthorizeOutcome.Granted(FakeEngine.grant(List.of(
                new BlockResult.Granted(r.blocks().get(0), SIZE, 0),
                new BlockResult.Refused(r.blocks().get(1), RefusalReason.STALE_GENERATION, 9, "moved on"))));
        RestorePorts ports = ports(engine.transfer(1 << 20, 4, true));
        Route route = route(2);
        RestoreRecords dst = held(ports.credits(route));
        var refused = (TransferPorts.GrantOutcome.Refused<RestoreRecords>) ports.authorize(route, 0);
        assertThat(refused.reason()).isEqualTo(AdmissionRefusal.STALE_GENERATION);
        assertThat(refused.refusedKeys()).containsExactly(route.blocks().get(1).key());
        assertThat(engine.released.get()).isEqualTo(1);
        assertThat(engine.readsSubmitted()).isZero();
        dst.release();
    }

    @Test
    @DisplayName("a source that left the membership view is unreachable for this request, named in the stop")
    void sourceLeft() {
        RestorePorts ports = ports(engine.transfer(1 << 20, 4, false));
        Route route = route(1);
        RestoreRecords dst = held(ports.credits(route));
        var refused = (TransferPorts.GrantOutcome.Refused<RestoreRecords>) ports.authorize(route, 0);
        assertThat(refused.reason()).isEqualTo(AdmissionRefusal.UNREACHABLE);
        assertThat(notes.stop(PrefixStop.REJECTED_IN_REQUEST)).endsWith("refusal=source-not-admitted");
        dst.release();
    }

    @Test
    @DisplayName("ROUTE-11 BND-1 receive credits are taken before the source is asked; a full window refuses, nothing held")
    void receiveCreditsFirst() {
        RestoreTransfer t = engine.transfer(1500, 2, true);
        assertThat(t.receiveCredits().tryTake(1000)).isTrue();
        RestorePorts ports = ports(t);
        var refused = (TransferPorts.CreditOutcome.Refused<RestoreRecords>) ports.credits(route(3));
        assertThat(refused.reason()).isEqualTo(AdmissionRefusal.RECEIVE_CREDITS);
        assertThat(t.receiveCredits().heldBytes()).isEqualTo(1000);
        assertThat(tiers.copyOut().heldBytes()).isZero();
        t.receiveCredits().release(1000);
    }

    @Test
    @DisplayName("BND-1 a route whose records do not fit the restore memory is refused (response-memory), its credits returned")
    void responseMemory() {
        RestoreTransfer t = engine.transfer(1 << 20, 4, true);
        RestorePorts ports = ports(t);
        var refused = (TransferPorts.CreditOutcome.Refused<RestoreRecords>) ports.credits(route(100));
        assertThat(refused.reason()).isEqualTo(AdmissionRefusal.RESPONSE_MEMORY);
        assertThat(t.receiveCredits().heldBytes()).isZero();
        assertThat(notes.stop(PrefixStop.DESTINATION_CAPACITY)).isEqualTo("response-memory");
    }

    @Test
    @DisplayName("a route's credits are its readsPerRoute largest blocks, at most the window, never below its largest block")
    void creditBytes() {
        List<RouteBlock> blocks = new ArrayList<>();
        long[] sizes = {100, 500, 300, 700, 200};
        for (int i = 0; i < sizes.length; i++) {
            blocks.add(new RouteBlock(new StateKey(NS, new byte[] {(byte) i}), 1, sizes[i], false));
        }
        Route r = new Route(new RouteSource.Peer(FakeEngine.SOURCE, Medium.SSD), 0, blocks);
        assertThat(RestorePorts.creditBytes(r, 10_000, 2)).isEqualTo(1200);
        assertThat(RestorePorts.creditBytes(r, 10_000, 4)).isEqualTo(1700);
        assertThat(RestorePorts.creditBytes(r, 900, 4)).isEqualTo(900);
        assertThat(RestorePorts.creditBytes(r, 600, 4)).isEqualTo(700);
    }

    @Test
    @DisplayName("ROUTE-11 issue 39: a lane held by an engine refuses the route by name before its Authorize; then each READ is charged on its own, waits while the lane is full and starts when a finished READ returns its bytes")
    void readsChargedOneByOne() throws Exception {
        var options = new orbitkv.server.config.AdmissionOptions(true, java.util.Map.of("lo", 0L), 3 * SIZE, 0, SIZE,
                30_000, 16, 60_000, 16, 64);
        try (var node = orbitkv.server.admission.NodeAdmissionService.start(options, "127.0.0.1").orElseThrow()) {
            RestoreTransfer t = engine.transfer(1 << 20, 3, true, Optional.of(node));
            RestorePorts ports = ports(t);
            long eng = ((orbitkv.recovery.AdmissionOutcome.Registered) node.register(
                    orbitkv.recovery.SubmitterKind.ENGINE_WRITE, "pd-0")).submitter();
            var lo = node.managerReadLane().orElseThrow();
            List<Long> leases = new ArrayList<>();
            for (long bytes : new long[] {SIZE, SIZE, SIZE / 2}) {
                leases.add(((orbitkv.recovery.AdmissionOutcome.Granted) node.charge(eng, lo,
                        orbitkv.recovery.NodeAdmission.LeaseRequest.now(bytes, System.nanoTime() + 10_000_000_000L), 0)).lease());
            }
            Route route = route(4);
            var refused = ports.credits(route);
            assertThat(refused).isInstanceOf(TransferPorts.CreditOutcome.Refused.class);
            assertThat(((TransferPorts.CreditOutcome.Refused<RestoreRecords>) refused).detail())
                    .contains("node admission refused 1000 bytes").contains("window-full");
            assertThat(t.receiveCredits().heldBytes()).as("the receive window is given back").isZero();
            assertThat(engine.authorizeCalls.get()).as("the source was never asked").isZero();

            node.returnBytes(eng, leases.get(0), SIZE, orbitkv.recovery.ReturnEvidence.TRANSPORT_PROGRESS);
            RestoreRecords dst = held(ports.credits(route));
            var granted = (TransferPorts.GrantOutcome.Granted<RestoreRecords>) ports.authorize(route, 0);
            TransferPorts.ReadSubmission sub = granted.grant().read(dst);
            assertThat(engine.readsSubmitted()).as("one READ fits beside the engine's 1,500 bytes; two wait").isEqualTo(1);
            assertThat(node.status().pending()).isEqualTo(2);
            engine.read(0).complete((byte) 0x40);
            // a grant may be answered by the admission pump thread: await it with a bound
            orbitkv.testing.Await.until("READ 1 starts once READ 0 returned its bytes", java.time.Duration.ofSeconds(10),
                    () -> engine.readsSubmitted() == 2);
            assertThat(node.status().pending()).as("READ 2 waits, READ 3 joined it").isEqualTo(2);
            node.returnBytes(eng, leases.get(1), SIZE, orbitkv.recovery.ReturnEvidence.TRANSPORT_PROGRESS);
            orbitkv.testing.Await.until("READ 2 starts on the engine's returned bytes", java.time.Duration.ofSeconds(10),
                    () -> engine.readsSubmitted() == 3);
            for (int i = 1; i < 4; i++) {
                int b = i;
                orbitkv.testing.Await.until("READ " + b + " submitted", java.time.Duration.ofSeconds(10),
                        () -> engine.readsSubmitted() > b);
                engine.read(i).complete((byte) (0x40 + i));
            }
            assertThat(sub.ready().get()).isInstanceOf(TransferPorts.ReadyOutcome.Ready.class);
            assertThat(sub.drained()).isDone();
            assertThat(node.status().chargedByKind()).as("every READ's charge returned")
                    .containsEntry(orbitkv.recovery.SubmitterKind.MANAGER_READ, 0L);
            granted.grant().release();
            dst.release();
            dst.abandon();
        }
    }
}
