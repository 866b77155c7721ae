package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.function.BooleanSupplier;
import orbitkv.server.incarnation.StandaloneMetadata;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.server.config.ListenAddress;
import orbitkv.server.net.NativeTransport;
import orbitkv.server.tier.CorruptionReason;
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import orbitkv.server.tier.RestoreArena;
import orbitkv.server.tier.SsdTier;
import orbitkv.testing.RawHttp;
import orbitkv.transfer.PayloadSource.PayloadLocation;
import orbitkv.transfer.PayloadSource.PinResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import orbitkv.server.api.BlockFraming;

/**
 * How often a restore copies a payload (issue 24 item 2, docs/results/2026-12-01-copies-per-route.md), counted by the
 * tiers' copied-bytes counters through the HTTP API of a standalone Manager over real tiers: a local DRAM block is
 * verified in the arena and sent from there (0 user-space copies; the pin is held until the response was written),
 * a local SSD block is copied once into its record. Verification is never skipped: a byte flipped in the arena is a
 * named miss, never wrong bytes.
 */
@Tag("unit")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class RestoreCopiesTest {
    private static final int SIZE = 4000; // within TestLimits.small()'s 4096-byte block bound

    private LocalTiers tiers;
    private HttpApiServer server;
    private RawHttp http;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        ResidencySequence sequence = new ResidencySequence();
        tiers = new LocalTiers(DramTier.open(dir, 256 * 1024, 64, sequence),
                SsdTier.open(dir.resolve("ssd"), 1 << 20, 64, 64, 1 << 20, sequence), sequence,
                new CopyOutBudget(1 << 20), RestoreArena.map(dir.resolve("restore"), 1 << 20));
        Incarnation self = Incarnation.random(new NodeId("n1"), new NodeEpoch(1));
        server = HttpApiServer.start(new ListenAddress("127.0.0.1", 0), NativeTransport.detect(), tiers,
                new StandaloneMetadata(null, self, Scope.all()), TestLimits.small());
        http = new RawHttp(server.boundAddress());
    }

    @AfterAll
    void stop() throws Exception {
        server.close();
        tiers.close();
    }

    private static BlockFraming.Block block(int key) {
        return new BlockFraming.Block(new byte[] {(byte) 0xd0, (byte) key}, HttpApiTest.payload(key, key, SIZE));
    }

    private static String hex(int key) {
        return HexFormat.of().formatHex(new byte[] {(byte) 0xd0, (byte) key});
    }

    private static StateKey key(int key) {
        return new StateKey(Namespace.utf8("ns"), new byte[] {(byte) 0xd0, (byte) key});
    }

    private RawHttp.Response restore(int... keys) throws IOException {
        String list = String.join(", ", Arrays.stream(keys).mapToObj(k -> "\"" + hex(k) + "\"").toList());
        return http.postJson("/cache/restore", "{\"namespace\": \"ns\", \"keys\": [" + list + "]}");
    }

    private void save(int... keys) throws IOException {
        List<BlockFraming.Block> blocks = Arrays.stream(keys).mapToObj(RestoreCopiesTest::block).toList();
        assertThat(http.post("/cache/save?namespace=ns", BlockFraming.CONTENT_TYPE, HttpApiTest.body(blocks)).status())
                .isEqualTo(200);
    }

    private static List<BlockFraming.Block> decode(RawHttp.Response r) {
        BlockFraming.Decoder d = new BlockFraming.Decoder(1 << 20, 1 << 20);
        d.feed(Unpooled.wrappedBuffer(r.body()));
        return d.finishBlocks();
    }

    /** Awaits a condition with a hard bound (the pins go back when Netty frees the written response). */
    private static void await(BooleanSupplier done, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime()).as("within 10 s: " + what).isLessThan(deadline);
            Thread.sleep(2); // bounded poll of a counter, not a synchronization by time
        }
    }

    private long dramCopied() {
        return tiers.dram().counters().payloadBytesCopiedTotal();
    }

    @Test
    @DisplayName("INV-9 a local DRAM restore sends each verified payload from the arena: 0 bytes copied, pins held until written")
    void dramIsSentInPlace() throws Exception {
        save(1, 2, 3, 4);
        long copied = dramCopied();
        long inPlace = tiers.dram().counters().payloadBytesVerifiedInPlaceTotal();
        RawHttp.Response r = restore(1, 2, 3, 4);
        assertThat(r.header(CacheApi.ROUTE_HEADER)).isEqualTo("r=4 stop=complete routes=local-dram[0,4):ready");
        assertThat(decode(r)).containsExactly(block(1), block(2), block(3), block(4));
        assertThat(dramCopied() - copied).as("DRAM payload bytes copied in user space").isZero();
        assertThat(tiers.dram().counters().payloadBytesVerifiedInPlaceTotal() - inPlace).isEqualTo(4L * SIZE);
        await(() -> tiers.dram().usage().pinsHeld() == 0, "the response's pins released after the write");
        await(() -> tiers.copyOut().heldBytes() == 0, "the response memory returned");
    }

    @Test
    @DisplayName("INV-9 a local SSD restore copies each payload exactly once, into its record, verified")
    void ssdIsCopiedOnce() throws Exception {
        save(11, 12);
        assertThat(http.post("/cache/sync", null, null).status()).isEqualTo(200);
        assertThat(tiers.ssd().residence(key(12))).as("sync waited for the SSD copies").isPresent();
        assertThat(http.postJson("/cache/evict", "{\"namespace\": \"ns\", \"keys\": [\"" + hex(11) + "\", \"" + hex(12)
                + "\"], \"medium\": \"DRAM\"}").status()).isEqualTo(200);
        long copied = tiers.ssd().counters().payloadBytesCopiedTotal();
        RawHttp.Response r = restore(11, 12);
        assertThat(r.header(CacheApi.ROUTE_HEADER)).isEqualTo("r=2 stop=complete routes=local-ssd[0,2):ready");
        assertThat(decode(r)).containsExactly(block(11), block(12));
        assertThat(tiers.ssd().counters().payloadBytesCopiedTotal() - copied).isEqualTo(2L * SIZE);
        RestoreArena arena = tiers.restoreArena().orElseThrow();
        assertThat(arena.highWaterBytes()).as("the records were copied into the restore arena").isPositive();
        assertThat(arena.fallbacksTotal()).as("no record fell back to a direct buffer").isZero();
        await(() -> arena.heldBytes() == 0, "each record's arena extent freed after the write");
        await(() -> tiers.copyOut().heldBytes() == 0, "the response memory returned");
    }

    @Test
    @DisplayName("INV-9 a byte flipped in the DRAM arena is found by the in-place check: evicted and counted, the replan serves the SSD copy, never wrong bytes")
    void flippedArenaByteNeverServed() throws Exception {
        save(21);
        assertThat(http.post("/cache/sync", null, null).status()).isEqualTo(200); // the SSD copy holds the saved bytes
        StateKey key = key(21);
        long sequence = tiers.dram().residence(key).orElseThrow().sequence();
        PayloadLocation.InArena at;
        try (PinResult.Pinned pin = (PinResult.Pinned) tiers.dram().pin(key, sequence)) {
            at = (PayloadLocation.InArena) pin.location();
        }
        try (FileChannel ch = FileChannel.open(tiers.dram().arenaFile(), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {(byte) 0xEE}), at.offset() + 100); // the mapping shares these pages
        }
        long corrupt = tiers.dram().counters().corruptTotal(CorruptionReason.CHECKSUM_MISMATCH);
        RawHttp.Response r = restore(21);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.header(CacheApi.ROUTE_HEADER)).isEqualTo("r=1 stop=complete routes=local-ssd[0,1):ready");
        assertThat(decode(r)).containsExactly(block(21));
        assertThat(tiers.dram().contains(key)).as("evicted through the journal").isFalse();
        assertThat(tiers.dram().counters().corruptTotal(CorruptionReason.CHECKSUM_MISMATCH) - corrupt).isEqualTo(1);
        await(() -> tiers.dram().usage().pinsHeld() == 0, "no pin left behind by the refused block");
    }
}
