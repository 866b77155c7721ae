package orbitkv.server.tier;

import static orbitkv.server.tier.Payloads.key;
import static orbitkv.server.tier.Payloads.payload;
import static orbitkv.server.tier.Payloads.pin;
import static orbitkv.server.tier.Payloads.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import orbitkv.inventory.Medium;
import orbitkv.transfer.PayloadSource.PinResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A save streams into DRAM reservations and becomes resident all at once (issue 20 items 3 and 4): reserved
 * bytes count against the tier, are invisible to reads and eviction until the commit, and are freed by an
 * abort; nothing of an aborted or refused batch is journaled as a put.
 */
@Tag("unit")
class SaveBatchTest {
    @TempDir
    Path dir;

    private final RecordingListener listener = new RecordingListener();
    private LocalTiers tiers;

    @BeforeEach
    void open() throws Exception {
        tiers = new LocalTiers(DramTier.open(dir, 8 * 64, 8, listener), null, listener);
    }

    @AfterEach
    void close() throws Exception {
        tiers.close();
    }

    private static void fill(SaveBatch batch, byte[] p) {
        for (int i = 0; i < p.length; i += 7) { // arbitrary chunking, as body chunks arrive
            batch.write(ByteBuffer.wrap(p, i, Math.min(7, p.length - i)));
        }
    }

    @Test
    @DisplayName("INV-1 INV-3 reservations are invisible until the commit, which publishes every record at once, in order")
    void allAtOnce() {
        SaveBatch batch = tiers.beginSave();
        assertThat(batch.reserve(key(1), 100)).isNull();
        fill(batch, payload(1, 1, 100));
        assertThat(batch.reserve(key(2), 64)).isNull();
        fill(batch, payload(1, 2, 64));
        TierUsage during = tiers.dram().usage();
        assertThat(during.reservedBytes()).isEqualTo(128 + 64);
        assertThat(during.allocatedBytes()).as("a reservation counts against the tier").isEqualTo(192);
        assertThat(during.blocks()).isZero();
        assertThat(tiers.residences(key(1))).isEmpty();
        assertThat(pin(tiers.dram(), key(1))).isInstanceOf(PinResult.NotResident.class);
        assertThat(listener.events).isEmpty();

        SaveBatch.Outcome out = batch.commit();
        assertThat(out).isEqualTo(new SaveBatch.Outcome.Stored(List.of(new SaveOutcome.Stored(Medium.DRAM, 1, 100),
                new SaveOutcome.Stored(Medium.DRAM, 2, 64))));
        assertThat(read(pin(tiers.dram(), key(1)))).isEqualTo(payload(1, 1, 100));
        assertThat(read(pin(tiers.dram(), key(2)))).isEqualTo(payload(1, 2, 64));
        assertThat(tiers.dram().usage().reservedBytes()).isZero();
        batch.abort(); // after a commit: nothing
        assertThat(tiers.dram().usage().blocks()).isEqualTo(2);
    }

    @Test
    @DisplayName("INV-9 an aborted batch stores nothing: reservations freed, no put journaled, counted")
    void abortFreesEverything() {
        tiers.save(key(9), payload(1, 9, 64));
        long head = listener.headSequence();
        SaveBatch batch = tiers.beginSave();
        batch.reserve(key(1), 64);
        fill(batch, payload(1, 1, 64));
        batch.reserve(key(2), 64);
        fill(batch, payload(1, 2, 30)); // cut off inside record 2
        batch.abort();
        assertThat(tiers.dram().usage().allocatedBytes()).isEqualTo(64);
        assertThat(tiers.dram().usage().reservedBytes()).isZero();
        assertThat(listener.headSequence()).isEqualTo(head);
        assertThat(tiers.residences(key(1))).isEmpty();
        assertThat(tiers.dram().counters().reservationsAbortedTotal()).isEqualTo(2);
        assertThatThrownBy(batch::commit).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("INV-9 a batch larger than the tier is refused at the record that does not fit; its own reservations are never evicted")
    void batchLargerThanTier() {
        SaveBatch batch = tiers.beginSave();
        for (int i = 0; i < 8; i++) {
            assertThat(batch.reserve(key(i), 64)).isNull();
            fill(batch, payload(1, i, 64));
        }
        SaveOutcome.Refused refused = batch.reserve(key(8), 64);
        assertThat(refused).isNotNull();
        assertThat(refused.reason()).isEqualTo(TierRefusal.NO_EVICTABLE_SPACE);
        batch.abort();
        assertThat(listener.events).isEmpty();
        assertThat(tiers.dram().usage().allocatedBytes()).isZero();
    }

    @Test
    @DisplayName("INV-9 two saves in flight: one never evicts the other's reservation")
    void reservationsAreNotEvictable() {
        SaveBatch a = tiers.beginSave();
        for (int i = 0; i < 4; i++) {
            a.reserve(key(i), 64);
            fill(a, payload(1, i, 64));
        }
        SaveBatch b = tiers.beginSave();
        for (int i = 4; i < 8; i++) {
            assertThat(b.reserve(key(i), 64)).isNull();
            fill(b, payload(1, i, 64));
        }
        assertThat(b.reserve(key(8), 64)).isNotNull();
        b.abort();
        assertThat(a.commit()).isInstanceOf(SaveBatch.Outcome.Stored.class);
        for (int i = 0; i < 4; i++) {
            assertThat(read(pin(tiers.dram(), key(i)))).isEqualTo(payload(1, i, 64));
        }
    }

    @Test
    @DisplayName("misuse is an exception: overfilling, reserving before a record is complete, repeating a key, committing nothing")
    void misuse() {
        SaveBatch batch = tiers.beginSave();
        assertThatThrownBy(batch::commit).isInstanceOf(IllegalStateException.class);
        batch.reserve(key(1), 10);
        assertThatThrownBy(() -> batch.write(ByteBuffer.allocate(11))).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> batch.reserve(key(2), 10)).isInstanceOf(IllegalStateException.class);
        batch.write(ByteBuffer.allocate(10));
        assertThatThrownBy(() -> batch.reserve(key(1), 10)).isInstanceOf(IllegalStateException.class);
        batch.abort();
        assertThat(tiers.dram().usage().allocatedBytes()).isZero();
    }
}
