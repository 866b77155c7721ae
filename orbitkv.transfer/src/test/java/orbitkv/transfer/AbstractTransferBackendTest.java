package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.Medium;
import orbitkv.testing.Await;
import orbitkv.transfer.FaultProxy.Fault;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The transfer suite every READ backend runs (the grpc-java AbstractTransportTest idea): one source and one
 * requester on loopback with real sockets, a real /dev/shm arena and real SSD files, and a fault-injecting
 * decorator in the backend's data path (a TCP proxy, or the shared-memory chunk copier). Subclasses name the
 * backend, its transport and how a fault is armed; every expectation is the same contract.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class AbstractTransferBackendTest {
    static final Duration READ_TIMEOUT = Duration.ofSeconds(10);
    static final Duration STALL_TIMEOUT = Duration.ofMillis(300);

    TransferFixture f;
    Arena arena;

    /** The transport of the data listener and of the engine's connections. */
    abstract NativeIo io();

    /** The policy this backend is asked with. */
    abstract BackendPolicy policy();

    /** The backend that serves DRAM blocks under {@link #policy()}. */
    abstract Backend dramBackend();

    /** The named failure a connection cut / vanished arena becomes on this backend. */
    abstract ReadFailure cutFailure();

    /** Arms the next READ's fault in this backend's data path. */
    abstract void arm(Fault fault, Duration delay);

    /** Lets a stalled READ go on once its deadline passed (the TCP stall needs nothing: its timeout closes it). */
    abstract void endStall(long deadlineNanos);

    /** True once the armed stall holds the READ mid-flight. */
    abstract boolean stallHolding();

    TransferFixture.Options options() {
        return TransferFixture.Options.defaults(io()).withFaults();
    }

    @BeforeEach
    void start() throws Exception {
        f = new TransferFixture(options());
        arena = Arena.ofShared();
    }

    @AfterEach
    void stop() throws Exception {
        f.close();
        arena.close();
    }

    CompletableFuture<ReadHandle> readAsync(Grant g, int block, MemorySegment dst, Duration timeout) {
        return CompletableFuture.completedFuture(f.engine.read(g, block, Destination.of(dst), policy(), timeout));
    }

    ReadResult read(Grant g, int block, MemorySegment dst) {
        return TransferFixture.await(f.engine.read(g, block, Destination.of(dst), policy(), READ_TIMEOUT));
    }

    /**
     * The grant's release ends it: Released, or AlreadyEnded when the source itself ended it RELEASED at its last
     * block's send (release after the last READ, issue 37 item 5: the source finished sending, this side's READ then
     * failed, so the requester still asks), never by expiry; then nothing is held on either side.
     */
    void assertDrainedAndReleased(Grant g) {
        ReleaseOutcome o = TransferFixture.await(f.engine.release(g));
        if (o instanceof ReleaseOutcome.AlreadyEnded) {
            assertThat(f.source.status().grantsEnded()).as("ended by the source at its last send, not by expiry")
                    .containsEntry(GrantEnd.RELEASED, 1L).containsEntry(GrantEnd.EXPIRED, 0L);
        } else {
            assertThat(o).isInstanceOf(ReleaseOutcome.Released.class);
        }
        assertNothingHeld();
    }

    void assertNothingHeld() {
        Await.inJvm("source pins back to zero", Duration.ofSeconds(10),
                () -> f.source.status().pinsHeld() == 0 && f.payloads.pinsHeld() == 0);
        TransferSourceStatus s = f.source.status();
        assertThat(s.pinnedBytesHeld()).isZero();
        assertThat(s.grantsOutstanding()).isZero();
        assertThat(s.egressInFlightBytes()).isZero();
        TransferEngineStatus e = f.engine.status();
        assertThat(e.receiveInFlightBytes()).as("receive credits").isZero();
        assertThat(e.readsInFlight()).isZero();
    }

    static void assertBytes(MemorySegment dst, byte[] expected) {
        assertThat(dst.asSlice(0, expected.length).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(expected);
    }

    static void assertZero(MemorySegment dst, long length) {
        assertThat(dst.asSlice(0, length).mismatch(MemorySegment.ofArray(new byte[(int) length]))).as("zero-filled").isEqualTo(-1);
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {1, 4095, 64 << 10, (1 << 20) + 17, 16 << 20, 32 << 20, 64 << 20, 128 << 20})
    @DisplayName("INV-2 INV-3 a granted DRAM block arrives byte-exact, verified, into requester memory; release returns every pin (issue 35: up to the 128 MiB ceiling)")
    void dramBlockByteExact(int size) {
        byte[] bytes = TransferFixture.payload(size, 1, size);
        long seq = f.payloads.putDram(TransferFixture.key(1), bytes);
        Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, seq)));
        assertThat(f.source.status().pinsHeld()).isEqualTo(1);
        MemorySegment dst = TransferFixture.destination(arena, size);
        ReadResult o = read(g, 0, dst);
        assertThat(o).isInstanceOfSatisfying(ReadResult.Completed.class, c -> {
            assertThat(c.backend()).isEqualTo(dramBackend());
            assertThat(c.route()).isEqualTo(PeerRouteClass.PEER_DRAM);
            assertThat(c.bytes()).isEqualTo(size);
        });
        assertBytes(dst, bytes);
        RouteStatus route = f.engine.status().route(dramBackend(), PeerRouteClass.PEER_DRAM);
        assertThat(route.reads()).isEqualTo(1);
        assertThat(route.bytes()).isEqualTo(size);
        assertThat(route.latency().count()).isEqualTo(1);
        assertDrainedAndReleased(g);
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {1, 64 << 10, 3 << 20, 32 << 20, 64 << 20, 128 << 20})
    @DisplayName("INV-2 an SSD block is sent from its file (sendfile) and arrives byte-exact over TCP on every backend (issue 35: up to the 128 MiB ceiling)")
    void ssdBlockByteExact(int size) {
        byte[] bytes = TransferFixture.payload(size, 2, size);
        long seq = f.payloads.putSsd(TransferFixture.key(2), bytes);
        Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(2), Medium.SSD, seq)));
        MemorySegment dst = TransferFixture.destination(arena, size);
        assertThat(read(g, 0, dst)).isInstanceOfSatisfying(ReadResult.Completed.class, c -> {
            assertThat(c.backend()).isEqualTo(Backend.TCP);
            assertThat(c.route()).isEqualTo(PeerRouteClass.PEER_SSD);
            assertThat(c.fallback()).isEqualTo(policy() == BackendPolicy.SHARED_MEMORY_PREFERRED
                    ? SharedMemoryFallback.SSD_RESIDENT : SharedMemoryFallback.NONE);
        });
        assertBytes(dst, bytes);
        // Counted when the source learns its write completed, which may follow the requester's last byte.
        Await.inJvm("the SSD bytes counted as served", Duration.ofSeconds(10),
                () -> f.source.status().bytesServed().get(PeerRouteClass.PEER_SSD) == size);
        assertDrainedAndReleased(g);
    }

    @Test
    @DisplayName("a heap destination is filled as exactly as native memory")
    void heapDestination() {
        byte[] bytes = TransferFixture.payload(300_000, 3, 0);
        long seq = f.payloads.putDram(TransferFixture.key(3), bytes);
        Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(3), Medium.DRAM, seq)));
        byte[] heap = new byte[bytes.length];
        assertThat(read(g, 0, MemorySegment.ofArray(heap))).isInstanceOf(ReadResult.Completed.class);
        assertThat(heap).isEqualTo(bytes);
        assertDrainedAndReleased(g);
    }

    @Test
    @DisplayName("INV-9 48 concurrent READs of one grant, DRAM and SSD mixed: all byte-exact; credits, connections and pins return to zero")
    void concurrentReads() {
        int n = 48;
        List<BlockRef> refs = new ArrayList<>();
        List<byte[]> expected = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] b = TransferFixture.payload(200_000 + i * 1000, 4, i);
            expected.add(b);
            Medium m = i % 3 == 0 ? Medium.SSD : Medium.DRAM;
            long seq = m == Medium.SSD ? f.payloads.putSsd(TransferFixture.key(100 + i), b)
                    : f.payloads.putDram(TransferFixture.key(100 + i), b);
            refs.add(new BlockRef(TransferFixture.key(100 + i), m, seq));
        }
        Grant g = f.grant(refs);
        List<MemorySegment> dsts = new ArrayList<>();
        List<CompletableFuture<ReadHandle>> handles = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            MemorySegment d = TransferFixture.destination(arena, expected.get(i).length);
            dsts.add(d);
            handles.add(readAsync(g, i, d, READ_TIMEOUT));
        }
        for (int i = 0; i < n; i++) {
            ReadResult o = TransferFixture.await(handles.get(i).join());
            if (o instanceof ReadResult.Refused r && r.reason() == ReadRefusal.CONNECTIONS_EXHAUSTED) {
                o = read(g, i, dsts.get(i)); // a refused READ may be asked again
            }
            assertThat(o).as("block %d", i).isInstanceOf(ReadResult.Completed.class);
            assertBytes(dsts.get(i), expected.get(i));
        }
        assertDrainedAndReleased(g);
    }

    @Test
    @DisplayName("INV-2 INV-3 ROUTE-7 only the exact current generation is granted: stale and evicted blocks are named refusals, request-local")
    void exactGenerationOnly() {
        long old = f.payloads.putDram(TransferFixture.key(5), TransferFixture.payload(1000, 5, 0));
        long current = f.payloads.putDram(TransferFixture.key(5), TransferFixture.payload(1000, 5, 1));
        long gone = f.payloads.putDram(TransferFixture.key(6), TransferFixture.payload(1000, 6, 0));
        f.payloads.evict(TransferFixture.key(6), Medium.DRAM);
        byte[] good = TransferFixture.payload(5000, 7, 0);
        long goodSeq = f.payloads.putDram(TransferFixture.key(7), good);
        AuthorizeOutcome o = f.authorize(Intent.FOREGROUND, List.of(
                new BlockRef(TransferFixture.key(5), Medium.DRAM, old),
                new BlockRef(TransferFixture.key(6), Medium.DRAM, gone),
                new BlockRef(TransferFixture.key(7), Medium.DRAM, goodSeq),
                new BlockRef(TransferFixture.key(7), Medium.SSD, goodSeq)));
        Grant g = ((AuthorizeOutcome.Granted) o).grant();
        assertThat(g.blocks().get(0)).isInstanceOfSatisfying(BlockResult.Refused.class, r -> {
            assertThat(r.reason()).isEqualTo(RefusalReason.STALE_GENERATION);
            assertThat(r.currentSequence()).isEqualTo(current);
        });
        assertThat(((BlockResult.Refused) g.blocks().get(1)).reason()).isEqualTo(RefusalReason.NOT_RESIDENT);
        assertThat(g.blocks().get(2)).isInstanceOf(BlockResult.Granted.class);
        assertThat(((BlockResult.Refused) g.blocks().get(3)).reason()).isEqualTo(RefusalReason.NOT_RESIDENT);
        assertThat(f.source.status().pinsHeld()).as("only the exact current generation is pinned").isEqualTo(1);
        MemorySegment dst = TransferFixture.destination(arena, 1000);
        assertThat(read(g, 0, dst)).isInstanceOfSatisfying(ReadResult.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(ReadRefusal.BLOCK_NOT_GRANTED));
        assertThat(dst.get(ValueLayout.JAVA_BYTE, 0)).as("a refused READ never touches its destination").isEqualTo((byte) 0xEE);
        MemorySegment dst2 = TransferFixture.destination(arena, good.length);
        assertThat(read(g, 2, dst2)).isInstanceOf(ReadResult.Completed.class);
        assertBytes(dst2, good);
        assertDrainedAndReleased(g);
    }

    @Test
    @DisplayName("INV-2 eviction after the grant never frees pinned bytes: the READ still gets the granted generation")
    void evictionAfterGrant() {
        byte[] dram = TransferFixture.payload(100_000, 8, 0);
        byte[] ssd = TransferFixture.payload(100_000, 8, 1);
        long d = f.payloads.putDram(TransferFixture.key(8), dram);
        long s = f.payloads.putSsd(TransferFixture.key(9), ssd);
        Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(8), Medium.DRAM, d),
                new BlockRef(TransferFixture.key(9), Medium.SSD, s)));
        f.payloads.evict(TransferFixture.key(8), Medium.DRAM);
        f.payloads.evict(TransferFixture.key(9), Medium.SSD);
        f.payloads.putDram(TransferFixture.key(8), TransferFixture.payload(100_000, 9, 0)); // a newer generation
        MemorySegment a = TransferFixture.destination(arena, dram.length);
        MemorySegment b = TransferFixture.destination(arena, ssd.length);
        assertThat(read(g, 0, a)).isInstanceOf(ReadResult.Completed.class);
        assertThat(read(g, 1, b)).isInstanceOf(ReadResult.Completed.class);
        assertBytes(a, dram);
        assertBytes(b, ssd);
        assertDrainedAndReleased(g);
    }

    /** Every fault on a 1 MiB block; a flipped byte also in a 32, 64 and 128 MiB block (issue 35: large blocks are verified whole). */
    static Stream<Arguments> faults() {
        Stream<Arguments> each = Stream.of(Fault.DELAY, Fault.CUT, Fault.STALL, Fault.CORRUPT).map(x -> Arguments.of(x, 1 << 20));
        Stream<Arguments> large = Stream.of(32 << 20, 64 << 20, 128 << 20).map(n -> Arguments.of(Fault.CORRUPT, n));
        return Stream.concat(each, large);
    }

    @ParameterizedTest(name = "{0} {1} bytes")
    @MethodSource("faults")
    @DisplayName("INV-8 every injected fault becomes its named outcome; nothing partial is exposed; credits and pins return")
    void faultsBecomeNamedOutcomes(Fault fault, int size) {
        byte[] bytes = TransferFixture.payload(size, 10, 0);
        long seq = f.payloads.putDram(TransferFixture.key(10), bytes);
        Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(10), Medium.DRAM, seq)));
        MemorySegment dst = TransferFixture.destination(arena, size);
        arm(fault, Duration.ofMillis(150));
        Duration timeout = fault == Fault.STALL ? STALL_TIMEOUT : READ_TIMEOUT;
        CompletableFuture<ReadHandle> h = readAsync(g, 0, dst, timeout);
        long deadline = System.nanoTime() + timeout.toNanos(); // read() returned after admission: never earlier than the READ's
        if (fault == Fault.STALL) {
            Await.inJvm("the stall holds the READ", Duration.ofSeconds(10), this::stallHolding);
            endStall(deadline);
        }
        ReadResult o = TransferFixture.await(h.join());
        switch (fault) {
            case DELAY -> {
                assertThat(o).isInstanceOf(ReadResult.Completed.class);
                assertBytes(dst, bytes);
            }
            case CUT -> assertThat(o).isInstanceOfSatisfying(ReadResult.Failed.class,
                    x -> assertThat(x.reason()).isEqualTo(cutFailure()));
            case STALL -> assertThat(o).isInstanceOf(ReadResult.TimedOut.class);
            case CORRUPT -> assertThat(o).isInstanceOfSatisfying(ReadResult.Failed.class,
                    x -> assertThat(x.reason()).isEqualTo(ReadFailure.CHECKSUM_MISMATCH));
            default -> throw new AssertionError(fault);
        }
        TransferEngineStatus s = f.engine.status();
        if (fault != Fault.DELAY) {
            assertZero(dst, size);
            assertThat(s.routes().stream().mapToLong(RouteStatus::reads).sum()).as("never counted as drained").isZero();
        }
        assertThat(s.checksumFailures()).isEqualTo(fault == Fault.CORRUPT ? 1 : 0);
        assertThat(s.readsTimedOut()).isEqualTo(fault == Fault.STALL ? 1 : 0);
        assertThat(s.readsTerminated()).isEqualTo(1);
        if (fault == Fault.CUT && dramBackend() == Backend.SHARED_MEMORY) {
            return; // the arena file is gone: the source's own mapping faults too; only the requester side is checked
        }
        assertDrainedAndReleased(g);
    }

    @Test
    @DisplayName("INV-8 release follows physical completion: a release asked during a stalled READ is sent only after it stopped")
    void releaseFollowsPhysicalCompletion() {
        byte[] bytes = TransferFixture.payload(1 << 20, 11, 0);
        long seq = f.payloads.putDram(TransferFixture.key(11), bytes);
        Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(11), Medium.DRAM, seq)));
        MemorySegment dst = TransferFixture.destination(arena, bytes.length);
        arm(Fault.STALL, Duration.ZERO);
        CompletableFuture<ReadHandle> h = readAsync(g, 0, dst, STALL_TIMEOUT);
        long deadline = System.nanoTime() + STALL_TIMEOUT.toNanos(); // not earlier than the READ's own deadline
        Await.inJvm("the stall holds the READ", Duration.ofSeconds(10), this::stallHolding);
        CompletionStage<ReleaseOutcome> release = f.engine.release(g);
        assertThat(release.toCompletableFuture()).as("release waits for the READ").isNotDone();
        TransferEngineStatus held = f.engine.status();
        assertThat(held.releasesConfirmed() + held.releasesNotConfirmed()).as("no Release was answered").isZero();
        assertThat(held.grantsTracked()).as("the engine still tracks the grant").isEqualTo(1);
        // The source may already have ended a TCP grant as RELEASED at its own last send (release_after_last_read:
        // the pins went with that send; the proxy swallows the stalled half): that is the source's end, not a
        // Release call, so the grant is either still outstanding or ended exactly so.
        TransferSourceStatus src = f.source.status();
        assertThat(src.grantsOutstanding() + src.grantsEnded().get(GrantEnd.RELEASED))
                .as("outstanding, or ended at the source's last send").isEqualTo(1);
        assertThat(f.engine.status().receiveInFlightBytes()).as("a stalled READ keeps its credits").isEqualTo(bytes.length);
        endStall(deadline);
        assertThat(TransferFixture.await(h.join())).isInstanceOf(ReadResult.TimedOut.class);
        assertThat(TransferFixture.await(release)).as("released, or ended by the source at its last send")
                .isInstanceOfAny(ReleaseOutcome.Released.class, ReleaseOutcome.AlreadyEnded.class);
        assertZero(dst, bytes.length);
        assertNothingHeld();
        assertThat(f.source.status().grantsEnded().get(GrantEnd.RELEASED)).isEqualTo(1);
        assertThat(TransferFixture.await(f.engine.read(g, 0, Destination.of(dst), policy(), READ_TIMEOUT)))
                .as("no READ after release").isInstanceOfSatisfying(ReadResult.Refused.class,
                        r -> assertThat(r.reason()).isEqualTo(ReadRefusal.GRANT_RELEASED));
    }

    @Test
    @DisplayName("INV-8 ROUTE-8 a cancelled READ is delivered only once stopped, never counted as drained, and not retried blindly")
    void cancelIsNotDrain() {
        byte[] bytes = TransferFixture.payload(1 << 20, 12, 0);
        long seq = f.payloads.putDram(TransferFixture.key(12), bytes);
        Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(12), Medium.DRAM, seq)));
        MemorySegment dst = TransferFixture.destination(arena, bytes.length);
        arm(Fault.STALL, Duration.ZERO);
        CompletableFuture<ReadHandle> h = readAsync(g, 0, dst, STALL_TIMEOUT);
        long deadline = System.nanoTime() + STALL_TIMEOUT.toNanos(); // not earlier than the READ's own deadline
        Await.inJvm("the stall holds the READ", Duration.ofSeconds(10), this::stallHolding);
        h.join().cancel();
        endStall(deadline);
        ReadResult o = TransferFixture.await(h.join());
        assertThat(o).isInstanceOf(ReadResult.Cancelled.class);
        assertZero(dst, bytes.length);
        TransferEngineStatus s = f.engine.status();
        assertThat(s.readsCancelled()).isEqualTo(1);
        assertThat(s.routes().stream().mapToLong(RouteStatus::reads).sum()).as("never counted as drained").isZero();
        assertThat(TransferFixture.await(f.engine.read(g, 0, Destination.of(dst), policy(), READ_TIMEOUT)))
                .isInstanceOfSatisfying(ReadResult.Refused.class,
                        r -> assertThat(r.reason()).isEqualTo(ReadRefusal.ALREADY_READ));
        assertDrainedAndReleased(g);
    }

    @Test
    @DisplayName("a destination smaller than the block is refused untouched; the block stays readable")
    void destinationTooSmall() {
        byte[] bytes = TransferFixture.payload(10_000, 13, 0);
        long seq = f.payloads.putDram(TransferFixture.key(13), bytes);
        Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(13), Medium.DRAM, seq)));
        MemorySegment small = TransferFixture.destination(arena, 9_999);
        assertThat(read(g, 0, small)).isInstanceOfSatisfying(ReadResult.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(ReadRefusal.DESTINATION_TOO_SMALL));
        assertThat(small.get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte) 0xEE);
        MemorySegment dst = TransferFixture.destination(arena, bytes.length);
        assertThat(read(g, 0, dst)).isInstanceOf(ReadResult.Completed.class);
        assertBytes(dst, bytes);
        assertDrainedAndReleased(g);
    }
}
