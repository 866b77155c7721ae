package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.Medium;
import orbitkv.testing.Await;
import orbitkv.transfer.FaultProxy.Fault;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * READs pipelined on one TCP data connection ({@code readsPerConnectionMax}, docs/transfer.md "Data channel"):
 * how many connections a grant's READs take, that a connection carries one grant only, and how a READ stopped
 * early or a fault in front of others ends each READ on the connection (INV-8: never an unverified byte, every
 * credit and pin back). Every case first completes one READ so that an idle connection exists: READs are
 * pipelined only behind a connection that is already open.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PipelinedReadTest {
    static final Duration READ_TIMEOUT = Duration.ofSeconds(10);
    static final int BLOCK = 256 << 10;

    private TransferFixture f;
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void stop() throws Exception {
        if (f != null) {
            f.close();
        }
        arena.close();
    }

    /** A fixture whose data connections pass the fault proxy (so a case can hold or break responses). */
    private void start(NativeIo io, int depth, boolean faults) throws Exception {
        TransferFixture.Options o = TransferFixture.Options.defaults(io)
                .withConfig(TransferFixture.testConfig().withReadsPerConnection(depth));
        f = new TransferFixture(faults ? o.withFaults() : o);
    }

    /** {@code n} DRAM blocks of {@link #BLOCK} bytes under one grant; the expected bytes in {@code expected}. */
    private Grant grant(int keyBase, int n, List<byte[]> expected) {
        return grant(keyBase, n, BLOCK, expected);
    }

    private Grant grant(int keyBase, int n, int size, List<byte[]> expected) {
        List<BlockRef> refs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] b = TransferFixture.payload(size, keyBase, i);
            expected.add(b);
            refs.add(new BlockRef(TransferFixture.key(keyBase + i), Medium.DRAM,
                    f.payloads.putDram(TransferFixture.key(keyBase + i), b)));
        }
        return f.grant(refs);
    }

    private ReadHandle read(Grant g, int block, MemorySegment dst, Duration timeout) {
        return f.engine.read(g, block, Destination.of(dst), BackendPolicy.TCP_ONLY, timeout);
    }

    /** One completed READ: leaves one idle data connection. */
    private void warm() {
        List<byte[]> b = new ArrayList<>();
        Grant g = grant(900, 1, b);
        MemorySegment d = TransferFixture.destination(arena, BLOCK);
        assertThat(TransferFixture.await(read(g, 0, d, READ_TIMEOUT))).isInstanceOf(ReadResult.Completed.class);
        TransferFixture.await(f.engine.release(g));
        assertThat(f.source.status().dataConnections()).isEqualTo(1);
    }

    private void assertNothingHeld() {
        Await.inJvm("source pins back to zero", Duration.ofSeconds(10),
                () -> f.source.status().pinsHeld() == 0 && f.source.status().egressInFlightBytes() == 0);
        assertThat(f.engine.status().receiveInFlightBytes()).as("receive credits").isZero();
        assertThat(f.engine.status().readsInFlight()).isZero();
    }

    /** Waits until the source sees {@code n} data connections (all READs chose theirs), then lets responses through. */
    private void releaseOnceConnected(int n) {
        Await.inJvm(n + " data connections", Duration.ofSeconds(10), () -> f.source.status().dataConnections() == n);
        f.proxy.releaseAll();
    }

    private static void assertAllExact(List<ReadHandle> handles, List<MemorySegment> dst, List<byte[]> expected) {
        for (int i = 0; i < handles.size(); i++) {
            assertThat(TransferFixture.await(handles.get(i))).as("READ %d", i).isInstanceOf(ReadResult.Completed.class);
            assertThat(dst.get(i).toArray(ValueLayout.JAVA_BYTE)).as("READ %d", i).isEqualTo(expected.get(i));
        }
    }

    private static void assertZero(MemorySegment dst) {
        assertThat(dst.asSlice(0, BLOCK).mismatch(MemorySegment.ofArray(new byte[BLOCK]))).as("zero-filled").isEqualTo(-1);
    }

    @ParameterizedTest(name = "{0}, {1} per connection, blocks of {2} bytes: {3} connections")
    @CsvSource({"EPOLL, 1, 262144, 4", "EPOLL, 2, 262144, 2", "EPOLL, 4, 262144, 1", "IO_URING, 4, 262144, 1",
            "EPOLL, 4, 1048576, 4", "EPOLL, 4, 524288, 2"})
    @DisplayName("INV-9 four READs of one grant pipeline at most readsPerConnectionMax deep and behind less than 1 MiB: ceil(4 / depth) connections for small blocks, one per megabyte block, all byte-exact")
    void readsOfOneGrantShareAConnection(NativeIo io, int depth, int size, int connections) throws Exception {
        start(io, depth, true);
        warm();
        List<byte[]> expected = new ArrayList<>();
        Grant g = grant(10, 4, size, expected);
        List<MemorySegment> dst = new ArrayList<>();
        List<ReadHandle> handles = new ArrayList<>();
        f.proxy.holdAll(); // no READ completes (and frees its connection) before all four chose theirs
        for (int i = 0; i < 4; i++) {
            dst.add(TransferFixture.destination(arena, size));
            handles.add(read(g, i, dst.get(i), READ_TIMEOUT));
        }
        releaseOnceConnected(connections);
        assertAllExact(handles, dst, expected);
        assertThat(f.source.status().dataConnections()).isEqualTo(connections);
        TransferFixture.await(f.engine.release(g));
        assertNothingHeld();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = NativeIo.class, names = {"EPOLL", "IO_URING"})
    @DisplayName("READs of two grants never share a connection: a stop in one request cannot take down another's READs")
    void grantsDoNotShareAConnection(NativeIo io) throws Exception {
        start(io, 4, true);
        warm();
        List<byte[]> ea = new ArrayList<>();
        List<byte[]> eb = new ArrayList<>();
        Grant a = grant(20, 2, ea);
        Grant b = grant(30, 2, eb);
        List<ReadHandle> handles = new ArrayList<>();
        List<MemorySegment> dst = new ArrayList<>();
        f.proxy.holdAll(); // no READ completes (and frees its connection) before all four chose theirs
        for (int i = 0; i < 4; i++) {
            dst.add(TransferFixture.destination(arena, BLOCK));
            handles.add(read(i % 2 == 0 ? a : b, i / 2, dst.get(i), READ_TIMEOUT));
        }
        releaseOnceConnected(2);
        assertAllExact(handles, dst, List.of(ea.get(0), eb.get(0), ea.get(1), eb.get(1)));
        assertThat(f.source.status().dataConnections()).as("one connection per grant").isEqualTo(2);
        TransferFixture.await(f.engine.release(a));
        TransferFixture.await(f.engine.release(b));
        assertNothingHeld();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = NativeIo.class, names = {"EPOLL", "IO_URING"})
    @DisplayName("INV-8 a READ cancelled behind another ends at once, untouched and zero-filled; the READs around it complete on the same connection")
    void cancelBehindTheHead(NativeIo io) throws Exception {
        start(io, 4, true);
        warm();
        List<byte[]> expected = new ArrayList<>();
        Grant g = grant(40, 3, expected);
        f.proxy.arm(Fault.DELAY, Duration.ofMillis(500)); // holds every response from the head's on
        List<MemorySegment> dst = new ArrayList<>();
        List<ReadHandle> handles = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            dst.add(TransferFixture.destination(arena, BLOCK));
            handles.add(read(g, i, dst.get(i), READ_TIMEOUT));
        }
        // every request is on the wire (the source sent all three into the holding proxy): the cancel is a stop of a
        // READ in flight behind the head, not a cancel before sending
        Await.inJvm("the source served the three READs", Duration.ofSeconds(10),
                () -> f.source.status().readsServed().getOrDefault(PeerRouteClass.PEER_DRAM, 0L) == 4);
        handles.get(1).cancel();
        assertThat(TransferFixture.await(handles.get(1))).isInstanceOf(ReadResult.Cancelled.class);
        assertThat(handles.get(0).outcome().toCompletableFuture()).as("the head is still held").isNotDone();
        assertZero(dst.get(1));
        assertThat(TransferFixture.await(handles.get(0))).isInstanceOf(ReadResult.Completed.class);
        assertThat(TransferFixture.await(handles.get(2))).isInstanceOf(ReadResult.Completed.class);
        assertThat(dst.get(0).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(expected.get(0));
        assertThat(dst.get(2).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(expected.get(2));
        assertZero(dst.get(1)); // its response was skipped, never written
        assertThat(f.source.status().dataConnections()).as("the connection stayed open").isEqualTo(1);
        assertThat(f.engine.status().readsCancelled()).isEqualTo(1);
        TransferFixture.await(f.engine.release(g));
        assertNothingHeld();
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"EPOLL, STALL", "EPOLL, CUT", "EPOLL, CORRUPT", "IO_URING, STALL", "IO_URING, CORRUPT"})
    @DisplayName("INV-8 a fault in the head's response ends the head by name and the READs behind it as CONNECTION_LOST; nothing partial exposed; credits and pins return")
    void faultInFrontOfOthers(NativeIo io, Fault fault) throws Exception {
        start(io, 4, true);
        warm();
        List<byte[]> expected = new ArrayList<>();
        Grant g = grant(50, 3, expected);
        // Held until all three READs chose the connection: else the head's fault could close it before the test
        // thread admits READ 1, which would then open a connection of its own (since the AUTHORIZE frame binds the
        // connection, READ 0 needs no BIND and its answer comes back fast enough to lose that race).
        f.proxy.holdAll();
        f.proxy.arm(fault, Duration.ZERO);
        List<MemorySegment> dst = new ArrayList<>();
        List<ReadHandle> handles = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            dst.add(TransferFixture.destination(arena, BLOCK));
            // the head's own timeout ends a stall; the others would wait far longer
            handles.add(read(g, i, dst.get(i), i == 0 ? Duration.ofMillis(300) : READ_TIMEOUT));
        }
        f.proxy.releaseAll();
        ReadResult head = TransferFixture.await(handles.get(0));
        switch (fault) {
            case STALL -> assertThat(head).isInstanceOf(ReadResult.TimedOut.class);
            case CUT -> assertThat(head).isInstanceOfSatisfying(ReadResult.Failed.class,
                    x -> assertThat(x.reason()).isEqualTo(ReadFailure.CONNECTION_LOST));
            case CORRUPT -> assertThat(head).isInstanceOfSatisfying(ReadResult.Failed.class,
                    x -> assertThat(x.reason()).isEqualTo(ReadFailure.CHECKSUM_MISMATCH));
            default -> throw new AssertionError(fault);
        }
        for (int i = 1; i < 3; i++) {
            assertThat(TransferFixture.await(handles.get(i))).as("READ %d behind the head", i)
                    .isInstanceOfSatisfying(ReadResult.Failed.class,
                            x -> assertThat(x.reason()).isEqualTo(ReadFailure.CONNECTION_LOST));
        }
        for (MemorySegment d : dst) {
            assertZero(d);
        }
        TransferEngineStatus s = f.engine.status();
        assertThat(s.routes().stream().mapToLong(RouteStatus::reads).sum()).as("only the warm-up READ completed").isEqualTo(1);
        assertThat(s.checksumFailures()).isEqualTo(fault == Fault.CORRUPT ? 1 : 0);
        TransferFixture.await(f.engine.release(g));
        assertNothingHeld();
    }
}
