package orbitkv.server.tier;

import static orbitkv.server.tier.Payloads.key;
import static orbitkv.server.tier.Payloads.payload;
import static orbitkv.server.tier.Payloads.pin;
import static orbitkv.server.tier.Payloads.read;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import orbitkv.inventory.Medium;
import orbitkv.transfer.PayloadSource.PinResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class SsdTierTest {
    @TempDir
    Path dir;

    private final RecordingListener listener = new RecordingListener();
    private SsdTier tier;

    @AfterEach
    void close() throws Exception {
        if (tier != null) {
            tier.close();
        }
    }

    private long submit(int i, byte[] payload) {
        SsdTier.Submitted s = Payloads.submit(tier, key(i), payload);
        assertThat(s).isInstanceOf(SsdTier.Submitted.Queued.class);
        return ((SsdTier.Submitted.Queued) s).ticket();
    }

    private long blockFiles() throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().startsWith(SsdTier.FILE_PREFIX)).count();
        }
    }

    @Test
    @DisplayName("OPS-4 block files of an earlier process are deleted at start; other files are left alone")
    void truncatedAtStart() throws Exception {
        Files.write(dir.resolve("blk-7.okv"), new byte[10]);
        Files.write(dir.resolve("operator-notes.txt"), new byte[3]);
        tier = SsdTier.open(dir, 1 << 20, 4, 16, 1 << 20, listener);
        assertThat(dir.resolve("blk-7.okv")).doesNotExist();
        assertThat(dir.resolve("operator-notes.txt")).exists();
        assertThat(tier.usage().blocks()).isZero();
    }

    @Test
    @DisplayName("INV-1 a block is resident (and its put reported) only after its bytes are written; reads are exact")
    void residentAfterWrite() throws Exception {
        tier = SsdTier.openPaused(dir, 1 << 20, 4, 16, 1 << 20, listener);
        long ticket = submit(1, payload(3, 1, 300));
        assertThat(pin(tier, key(1))).isInstanceOf(PinResult.NotResident.class);
        assertThat(listener.events).isEmpty();
        tier.startWriter();
        assertThat(tier.awaitWritten(ticket, 10_000)).isTrue();
        assertThat(listener.events).containsExactly(new RecordingListener.Event("put", key(1), Medium.SSD, 1, 300));
        assertThat(read(pin(tier, key(1)))).isEqualTo(payload(3, 1, 300));
        assertThat(blockFiles()).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-9 a full write queue (count or bytes) is an explicit, counted refusal, never a silent drop")
    void queueFull() throws Exception {
        tier = SsdTier.openPaused(dir, 1 << 20, 4, 2, 1000, listener);
        submit(1, payload(1, 1, 100));
        submit(2, payload(1, 2, 100));
        assertThat(Payloads.submit(tier, key(3), payload(1, 3, 100))).isEqualTo(new SsdTier.Submitted.Refused(
                TierRefusal.WRITE_QUEUE_FULL, "SSD write queue is full: 2/2 writes, 200/1000 bytes"));
        tier.close();
        tier = SsdTier.openPaused(dir, 1 << 20, 4, 8, 250, listener);
        submit(1, payload(1, 1, 200));
        assertThat(Payloads.submit(tier, key(2), payload(1, 2, 51))).isInstanceOf(SsdTier.Submitted.Refused.class);
        assertThat(tier.counters().refusedTotal(TierRefusal.WRITE_QUEUE_FULL)).isEqualTo(1);
        assertThat(tier.queueDepth()).containsExactly(1, 200);
    }

    @Test
    @DisplayName("a block larger than the SSD tier is refused at submit")
    void blockExceedsTier() throws Exception {
        tier = SsdTier.open(dir, 100, 4, 8, 1000, listener);
        assertThat(Payloads.submit(tier, key(1), new byte[101])).isInstanceOf(SsdTier.Submitted.Refused.class);
        assertThat(tier.counters().refusedTotal(TierRefusal.BLOCK_EXCEEDS_TIER)).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-3 LRU eviction of whole files keeps the tier bounded and reports each SSD delete")
    void lruEviction() throws Exception {
        tier = SsdTier.open(dir, 3 * 100, 4, 16, 1 << 20, listener);
        for (int i = 0; i < 3; i++) {
            tier.awaitWritten(submit(i, payload(1, i, 100)), 10_000);
        }
        read(pin(tier, key(0)));
        long t = submit(3, payload(1, 3, 100));
        assertThat(tier.awaitWritten(t, 10_000)).isTrue();
        assertThat(listener.deletes()).containsExactly("SSD:" + key(1).keyHex());
        assertThat(tier.usage().residentBytes()).isEqualTo(300);
        assertThat(blockFiles()).isEqualTo(3);
        assertThat(read(pin(tier, key(0)))).isEqualTo(payload(1, 0, 100));
    }

    @Test
    @DisplayName("INV-3 an evict or a newer submit supersedes a queued write: an evicted key is never resurrected")
    void supersededWrites() throws Exception {
        tier = SsdTier.openPaused(dir, 1 << 20, 4, 16, 1 << 20, listener);
        submit(1, payload(1, 1, 64));
        assertThat(tier.evict(key(1))).isTrue();
        submit(2, payload(1, 2, 64));
        long last = submit(2, payload(2, 2, 64));
        tier.startWriter();
        assertThat(tier.awaitWritten(last, 10_000)).isTrue();
        assertThat(tier.contains(key(1))).isFalse();
        assertThat(read(pin(tier, key(2)))).isEqualTo(payload(2, 2, 64));
        assertThat(tier.supersededWrites()).isEqualTo(2);
        assertThat(listener.events).hasSize(1);
        assertThat(blockFiles()).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-9 an evicted file that is pinned stays readable until its pin closes, then is deleted")
    void pinnedFileSurvivesEvict() throws Exception {
        tier = SsdTier.open(dir, 1 << 20, 4, 16, 1 << 20, listener);
        tier.awaitWritten(submit(1, payload(1, 1, 64)), 10_000);
        PinResult pinned = pin(tier, key(1));
        assertThat(tier.evict(key(1))).isTrue();
        assertThat(blockFiles()).isEqualTo(1);
        assertThat(read(pinned)).isEqualTo(payload(1, 1, 64));
        assertThat(blockFiles()).isZero();
        assertThat(listener.deletes()).containsExactly("SSD:" + key(1).keyHex());
    }

    @Test
    @DisplayName("close deletes the block files")
    void closeDeletesFiles() throws Exception {
        tier = SsdTier.open(dir, 1 << 20, 4, 16, 1 << 20, listener);
        tier.awaitWritten(submit(1, payload(1, 1, 64)), 10_000);
        tier.close();
        assertThat(blockFiles()).isZero();
        tier = null;
    }
}
