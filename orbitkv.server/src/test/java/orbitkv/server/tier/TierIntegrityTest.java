package orbitkv.server.tier;

import static orbitkv.server.tier.Payloads.key;
import static orbitkv.server.tier.Payloads.payload;
import static orbitkv.server.tier.Payloads.pin;
import static orbitkv.server.tier.Payloads.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;
import orbitkv.transfer.PayloadSource.CopyOutcome;
import orbitkv.transfer.PayloadSource.PayloadLocation;
import orbitkv.transfer.PayloadSource.PinResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The one pin contract ({@link orbitkv.transfer.PayloadSource}) as both tiers implement it: exact-generation
 * pins bounded by count and bytes, pinned bytes that outlive eviction, and CRC32C verification of every
 * copy with broken blocks evicted through the journal and counted (issue 20 item 2, issue 13 item 1).
 */
@Tag("unit")
class TierIntegrityTest {
    @TempDir
    Path dir;

    private final RecordingListener listener = new RecordingListener();
    private DramTier dram;
    private SsdTier ssd;

    @AfterEach
    void close() throws Exception {
        if (ssd != null) {
            ssd.close();
        }
        if (dram != null) {
            dram.close();
        }
    }

    private ResidenceAt ssdBlock(int i, byte[] p) throws Exception {
        ssd = SsdTier.open(dir.resolve("ssd"), 1 << 20, 8, 16, 1 << 20, listener);
        long ticket = ((SsdTier.Submitted.Queued) Payloads.submit(ssd, key(i), p)).ticket();
        assertThat(ssd.awaitWritten(ticket, 10_000)).isTrue();
        return new ResidenceAt(key(i), ssd.residence(key(i)).orElseThrow().sequence(), ssd.fileOf(key(i)).orElseThrow());
    }

    private record ResidenceAt(StateKey key, long sequence, Path file) {}

    @ParameterizedTest(name = "{0}")
    @DisplayName("INV-9 a broken SSD block is a named corruption, evicted through the journal and counted, never wrong bytes")
    @CsvSource(delimiter = '|', textBlock = """
            flip one byte    | CHECKSUM_MISMATCH
            truncate         | TRUNCATED_FILE
            delete the file  | MISSING_FILE
            append a byte    | SIZE_MISMATCH
            """)
    void brokenSsdBlock(String damage, CorruptionReason expected) throws Exception {
        byte[] p = payload(5, 1, 300);
        ResidenceAt at = ssdBlock(1, p);
        switch (damage) {
            case "flip one byte" -> {
                byte[] b = Files.readAllBytes(at.file());
                b[200] ^= 0x01;
                Files.write(at.file(), b);
            }
            case "truncate" -> {
                try (FileChannel ch = FileChannel.open(at.file(), StandardOpenOption.WRITE)) {
                    ch.truncate(299);
                }
            }
            case "delete the file" -> Files.delete(at.file());
            default -> Files.write(at.file(), new byte[] {7}, StandardOpenOption.APPEND);
        }
        PinResult.Pinned pinned = (PinResult.Pinned) ssd.pin(at.key(), at.sequence());
        ByteBuffer dst = ByteBuffer.allocate(300);
        CopyOutcome out;
        try (pinned) {
            out = pinned.copyTo(dst);
        }
        assertThat(out).isInstanceOfSatisfying(CopyOutcome.Corrupt.class,
                c -> assertThat(c.reason()).isEqualTo(expected.wireName()));
        assertThat(dst.position()).as("a broken copy does not advance the destination").isZero();
        assertThat(listener.deletes()).as("evicted through the normal path").containsExactly("SSD:" + key(1).keyHex());
        assertThat(ssd.contains(key(1))).isFalse();
        assertThat(ssd.counters().corruptTotal(expected)).isEqualTo(1);
        assertThat(ssd.pin(at.key(), at.sequence())).isInstanceOf(PinResult.NotResident.class);
        assertThat(ssd.usage().pinsHeld()).isZero();
    }

    @Test
    @DisplayName("INV-9 a DRAM copy is verified too: a byte flipped in the arena is a checksum mismatch, evicted and counted")
    void brokenDramBlock() throws Exception {
        dram = DramTier.open(dir, 4096, 4, listener);
        long seq = ((SaveOutcome.Stored) dram.put(key(1), payload(1, 1, 100))).sequence();
        PinResult.Pinned pinned = (PinResult.Pinned) dram.pin(key(1), seq);
        PayloadLocation.InArena at = (PayloadLocation.InArena) pinned.location();
        assertThat(at.arenaFile()).isEqualTo(dram.arenaFile());
        assertThat(at.bytes().byteSize()).isEqualTo(100);
        try (FileChannel ch = FileChannel.open(dram.arenaFile(), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {(byte) 0xEE}), at.offset() + 40); // the mapping shares these pages
        }
        CopyOutcome out;
        try (pinned) {
            out = pinned.copyTo(ByteBuffer.allocate(100));
        }
        assertThat(out).isInstanceOfSatisfying(CopyOutcome.Corrupt.class,
                c -> assertThat(c.reason()).isEqualTo("checksum-mismatch"));
        assertThat(dram.contains(key(1))).isFalse();
        assertThat(listener.deletes()).containsExactly("DRAM:" + key(1).keyHex());
        assertThat(dram.counters().corruptTotal(CorruptionReason.CHECKSUM_MISMATCH)).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-3 a pin names the exact generation: an older one is StaleGeneration(current), nothing pinned")
    void exactGeneration() throws Exception {
        dram = DramTier.open(dir, 4096, 4, listener);
        long first = ((SaveOutcome.Stored) dram.put(key(1), payload(1, 1, 64))).sequence();
        long second = ((SaveOutcome.Stored) dram.put(key(1), payload(2, 1, 64))).sequence();
        assertThat(dram.pin(key(1), first)).isEqualTo(new PinResult.StaleGeneration(second));
        assertThat(dram.pin(key(2), 1)).isEqualTo(new PinResult.NotResident());
        assertThat(dram.usage().pinsHeld()).isZero();
        try (PinResult.Pinned p = (PinResult.Pinned) dram.pin(key(1), second)) {
            assertThat(p.residencySequence()).isEqualTo(second);
            assertThat(p.crc32c()).isEqualTo(Payloads.crc32c(payload(2, 1, 64)));
            assertThat(p.medium()).isEqualTo(Medium.DRAM);
        }
        dram.close();
        assertThat(dram.pin(key(1), second)).isEqualTo(new PinResult.Closed());
        dram = null;
    }

    @Test
    @DisplayName("INV-9 pins are bounded by bytes as well as count: beyond either, PinLimit, counted, nothing pinned")
    void pinnedBytesBound() throws Exception {
        dram = DramTier.open(dir, TierInstance.random("n"), 8192, 16, 300, listener);
        long a = ((SaveOutcome.Stored) dram.put(key(1), payload(1, 1, 200))).sequence();
        long b = ((SaveOutcome.Stored) dram.put(key(2), payload(1, 2, 200))).sequence();
        PinResult.Pinned first = (PinResult.Pinned) dram.pin(key(1), a);
        assertThat(dram.pin(key(2), b)).isEqualTo(new PinResult.PinLimit(16, 300));
        assertThat(dram.usage().pinnedBytes()).isEqualTo(200);
        first.release();
        first.release(); // idempotent
        assertThat(read(dram.pin(key(2), b))).isEqualTo(payload(1, 2, 200));
        assertThat(dram.counters().refusedTotal(TierRefusal.PINS_EXHAUSTED)).isEqualTo(1);
        assertThat(dram.usage().pinnedBytes()).isZero();
    }

    @Test
    @DisplayName("INV-9 eviction never frees pinned bytes: an explicit evict journals the delete, the reader still copies exact bytes")
    void evictPinnedKeepsBytes() throws Exception {
        dram = DramTier.open(dir, 2 * 64, 4, listener);
        long seq = ((SaveOutcome.Stored) dram.put(key(0), payload(1, 0, 64))).sequence();
        PinResult.Pinned pinned = (PinResult.Pinned) dram.pin(key(0), seq);
        assertThat(dram.evict(key(0))).isTrue();
        assertThat(listener.deletes()).containsExactly("DRAM:" + key(0).keyHex());
        assertThat(dram.counters().evictedPinnedTotal()).isEqualTo(1);
        assertThat(dram.usage().allocatedBytes()).as("the pinned extent stays allocated").isEqualTo(64);
        dram.put(key(1), payload(1, 1, 64)); // fills the only other extent
        assertThat(read(pinned)).isEqualTo(payload(1, 0, 64));
        assertThat(dram.usage().allocatedBytes()).isEqualTo(64);
        assertThatThrownBy(() -> pinned.copyTo(ByteBuffer.allocate(64))).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("INV-9 LRU passes over pinned residences (counted) and refuses a save when nothing unpinned is left")
    void lruSkipsPinned() throws Exception {
        dram = DramTier.open(dir, 2 * 64, 4, listener);
        long s0 = ((SaveOutcome.Stored) dram.put(key(0), payload(1, 0, 64))).sequence();
        long s1 = ((SaveOutcome.Stored) dram.put(key(1), payload(1, 1, 64))).sequence();
        try (PinResult.Pinned p0 = (PinResult.Pinned) dram.pin(key(0), s0);
             PinResult.Pinned p1 = (PinResult.Pinned) dram.pin(key(1), s1)) {
            assertThat(dram.put(key(2), payload(1, 2, 64))).isInstanceOfSatisfying(SaveOutcome.Refused.class,
                    r -> assertThat(r.reason()).isEqualTo(TierRefusal.NO_EVICTABLE_SPACE));
            assertThat(dram.counters().pinnedSkippedByLruTotal()).isEqualTo(2);
            assertThat(p0.sizeBytes() + p1.sizeBytes()).isEqualTo(128);
        }
        assertThat(dram.put(key(2), payload(1, 2, 64))).isInstanceOf(SaveOutcome.Stored.class);
    }

    @Test
    @DisplayName("INV-1 INV-9 the SSD write-through reads the DRAM residence under a write-through pin and keeps its CRC32C")
    void writeThroughFromDram() throws Exception {
        dram = DramTier.open(dir, 8192, 4, listener);
        ssd = SsdTier.openPaused(dir.resolve("ssd"), 1 << 20, 4, 8, 1 << 20, listener);
        LocalTiers tiers = new LocalTiers(dram, ssd, listener);
        byte[] p = payload(3, 7, 500);
        assertThat(tiers.save(key(7), p)).isInstanceOf(SaveOutcome.Stored.class);
        assertThat(dram.usage().pinsHeld()).as("the queued copy holds the DRAM bytes, not a heap copy").isEqualTo(1);
        assertThat(dram.usage().pinsMax()).isEqualTo(4);
        assertThat(dram.evict(key(7))).isTrue();
        ssd.startWriter();
        assertThat(tiers.awaitSubmittedSaves(10_000)).isTrue();
        assertThat(dram.usage().pinsHeld()).isZero();
        assertThat(dram.usage().allocatedBytes()).as("freed at the last unpin").isZero();
        long seq = ssd.residence(key(7)).orElseThrow().sequence();
        try (PinResult.Pinned onSsd = (PinResult.Pinned) tiers.pin(key(7), Medium.SSD, seq)) {
            assertThat(onSsd.crc32c()).isEqualTo(Payloads.crc32c(p));
            assertThat(onSsd.location()).isEqualTo(new PayloadLocation.InFile(ssd.fileOf(key(7)).orElseThrow(), 0, 500));
        }
        assertThat(read(tiers.pin(key(7), Medium.SSD, seq))).isEqualTo(p);
        assertThat(pin(ssd, key(8))).isInstanceOf(PinResult.NotResident.class);
    }
}
