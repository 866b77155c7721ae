package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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

/**
 * Every bound is an explicit, named refusal with a counter, and a refusal takes nothing (INV-9, BND-1, ROUTE-11):
 * pins per requester (count and bytes), the payload owner's own pin limit, the prefetch share, the block size,
 * the requester's receive window (bytes and READs in flight) and its connections per source.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BoundsTest {
    private static final int MiB = 1 << 20;
    private TransferFixture f;
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void stop() throws IOException {
        if (f != null) {
            f.close();
        }
        arena.close();
    }

    private void start(TransferFixture.Options o) throws IOException {
        f = new TransferFixture(o);
    }

    private static TransferConfig config() {
        return TransferFixture.testConfig();
    }

    private List<BlockRef> blocks(int n, int size, Medium medium) {
        List<BlockRef> refs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] b = TransferFixture.payload(size, 7, i);
            long seq = medium == Medium.DRAM ? f.payloads.putDram(TransferFixture.key(i), b)
                    : f.payloads.putSsd(TransferFixture.key(i), b);
            refs.add(new BlockRef(TransferFixture.key(i), medium, seq));
        }
        return refs;
    }

    private static RefusalReason reason(BlockResult r) {
        return r instanceof BlockResult.Refused x ? x.reason() : null;
    }

    @Test
    @DisplayName("INV-9 pins per requester by count: the third block of three is PINS_EXHAUSTED, two are pinned")
    void pinsPerRequesterCount() throws IOException {
        TransferConfig c = config();
        start(TransferFixture.Options.defaults(NativeIo.detect()).withConfig(c.withPins(2, c.pinnedBytesPerRequesterMax(),
                c.pinsTotalMax(), c.pinnedBytesTotalMax(), c.prefetchPinnedBytesTotalMax())));
        Grant g = f.grant(blocks(3, 1000, Medium.DRAM));
        assertThat(g.blocks()).extracting(BoundsTest::reason).containsExactly(null, null, RefusalReason.PINS_EXHAUSTED);
        assertThat(f.source.status().pinsHeld()).isEqualTo(2);
        assertThat(f.payloads.pinsHeld()).as("the refused pin was given back").isEqualTo(2);
        AuthorizeOutcome again = f.authorize(Intent.FOREGROUND, blocks(1, 1000, Medium.SSD));
        assertThat(again).isInstanceOfSatisfying(AuthorizeOutcome.NothingGranted.class, n ->
                assertThat(n.refusals()).extracting(BlockResult.Refused::reason).containsExactly(RefusalReason.PINS_EXHAUSTED));
        assertThat(f.source.status().refusals().get(RefusalReason.PINS_EXHAUSTED)).isEqualTo(2);
        TransferFixture.await(f.engine.release(g));
        Await.inJvm("pins zero", Duration.ofSeconds(5), () -> f.source.status().pinsHeld() == 0);
        assertThat(f.authorize(Intent.FOREGROUND, blocks(2, 1000, Medium.DRAM))).as("room again")
                .isInstanceOf(AuthorizeOutcome.Granted.class);
    }

    @Test
    @DisplayName("INV-9 pins per requester by bytes, block size, prefetch share: each its named refusal")
    void pinnedBytesBlockSizeAndPrefetch() throws IOException {
        TransferConfig c = config().withWindows(MiB, 4L * MiB, 4L * MiB, 64, 16)
                .withPins(1024, 3L * MiB / 2, 8192, 8L * MiB, MiB / 2);
        start(TransferFixture.Options.defaults(NativeIo.detect()).withConfig(c));
        List<BlockRef> refs = blocks(2, MiB, Medium.DRAM);
        byte[] big = TransferFixture.payload(MiB + 1, 7, 99);
        refs.add(new BlockRef(TransferFixture.key(99), Medium.DRAM, f.payloads.putDram(TransferFixture.key(99), big)));
        Grant g = f.grant(refs);
        assertThat(g.blocks()).extracting(BoundsTest::reason)
                .containsExactly(null, RefusalReason.PINS_EXHAUSTED, RefusalReason.BLOCK_TOO_LARGE);
        assertThat(f.source.status().pinnedBytesHeld()).isEqualTo(MiB);
        TransferFixture.await(f.engine.release(g));
        AuthorizeOutcome prefetch = f.authorize(Intent.PREFETCH, blocks(2, 300_000, Medium.DRAM));
        assertThat(((AuthorizeOutcome.Granted) prefetch).grant().blocks()).extracting(BoundsTest::reason)
                .containsExactly(null, RefusalReason.PREFETCH_LIMIT);
        assertThat(f.source.status().prefetchPinnedBytesHeld()).isEqualTo(300_000);
    }

    @Test
    @DisplayName("INV-9 the payload owner's own pin limit is PINS_EXHAUSTED too")
    void payloadOwnerPinLimit() throws IOException {
        start(TransferFixture.Options.defaults(NativeIo.detect()).withSourcePinsMax(1));
        Grant g = f.grant(blocks(2, 1000, Medium.DRAM));
        assertThat(g.blocks()).extracting(BoundsTest::reason).containsExactly(null, RefusalReason.PINS_EXHAUSTED);
    }

    @Test
    @DisplayName("ROUTE-11 BND-1 the receive window (bytes) refuses a READ while a stalled one holds its credits; it admits it after")
    void creditsExhausted() throws IOException {
        TransferConfig c = config().withWindows(MiB, 4L * MiB, MiB, 64, 16);
        start(TransferFixture.Options.defaults(NativeIo.detect()).withConfig(c).withFaults());
        Grant g = f.grant(blocks(2, MiB, Medium.DRAM));
        f.proxy.arm(Fault.STALL, Duration.ZERO);
        MemorySegment a = TransferFixture.destination(arena, MiB);
        MemorySegment b = TransferFixture.destination(arena, MiB);
        ReadHandle stalled = f.engine.read(g, 0, Destination.of(a), BackendPolicy.TCP_ONLY, Duration.ofMillis(400));
        assertThat(f.engine.status().receiveInFlightBytes()).isEqualTo(MiB);
        ReadResult refused = TransferFixture.await(f.engine.read(g, 1, Destination.of(b), BackendPolicy.TCP_ONLY,
                Duration.ofSeconds(10)));
        assertThat(refused).isInstanceOfSatisfying(ReadResult.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(ReadRefusal.CREDITS_EXHAUSTED));
        assertThat(TransferFixture.await(stalled)).isInstanceOf(ReadResult.TimedOut.class);
        assertThat(f.engine.status().receiveInFlightBytes()).as("returned at physical termination").isZero();
        assertThat(TransferFixture.await(f.engine.read(g, 1, Destination.of(b), BackendPolicy.TCP_ONLY,
                Duration.ofSeconds(10)))).isInstanceOf(ReadResult.Completed.class);
        assertThat(f.engine.status().readRefusals().get(ReadRefusal.CREDITS_EXHAUSTED)).isEqualTo(1);
    }

    @Test
    @DisplayName("ROUTE-11 the receive window (READs in flight) and the connections per source are named refusals")
    void readsInFlightAndConnections() throws IOException {
        TransferConfig c = config().withWindows(MiB, 4L * MiB, 4L * MiB, 1, 1);
        start(TransferFixture.Options.defaults(NativeIo.detect()).withConfig(c).withFaults());
        Grant g = f.grant(blocks(3, 100_000, Medium.DRAM));
        f.proxy.arm(Fault.STALL, Duration.ZERO);
        ReadHandle stalled = f.engine.read(g, 0, Destination.of(TransferFixture.destination(arena, 100_000)),
                BackendPolicy.TCP_ONLY, Duration.ofMillis(400));
        assertThat(TransferFixture.await(f.engine.read(g, 1, Destination.of(TransferFixture.destination(arena, 100_000)),
                BackendPolicy.TCP_ONLY, Duration.ofSeconds(5)))).isInstanceOfSatisfying(ReadResult.Refused.class,
                        r -> assertThat(r.reason()).isEqualTo(ReadRefusal.CONNECTIONS_EXHAUSTED));
        f.copier.arm(Fault.STALL, Duration.ZERO);
        assertThat(TransferFixture.await(f.engine.read(g, 2, Destination.of(TransferFixture.destination(arena, 100_000)),
                BackendPolicy.SHARED_MEMORY_PREFERRED, Duration.ofSeconds(5)))).isInstanceOfSatisfying(ReadResult.Refused.class,
                        r -> assertThat(r.reason()).isEqualTo(ReadRefusal.READS_IN_FLIGHT_LIMIT));
        assertThat(TransferFixture.await(stalled)).isInstanceOf(ReadResult.TimedOut.class);
        f.copier.resume();
    }
}
