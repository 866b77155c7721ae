package orbitkv.server.restore;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;
import orbitkv.server.config.SpeculationOptions;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.Residence;
import orbitkv.server.tier.ResidencySequence;
import orbitkv.transfer.PayloadSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Retention of fetched blocks (ROUTE-12): the reuse-benefit estimate, the DRAM reservation before the copy and its
 * named refusals, a kept block a residence with a journal put (the listener's sequence advances, as for a save), and
 * a restore keeps peer blocks only when it asked ({@code store_local}), never as a side effect of a demand fetch.
 */
@Tag("unit")
@Timeout(60)
class RetentionTest {
    private static final int SIZE = 4000;
    private static final long DRAM = 64 * 1024;

    @TempDir
    Path dir;
    private DramPeerFixture f;
    private LocalTiers tiers;
    private ResidencySequence sequence;

    @BeforeEach
    void open() throws Exception {
        f = new DramPeerFixture(dir, DRAM, SIZE);
        tiers = f.tiers;
        sequence = f.sequence;
    }

    @AfterEach
    void close() throws Exception {
        f.close();
    }

    private static StateKey key(int i) {
        return DramPeerFixture.key(i);
    }

    private static ByteBuffer bytes(int value) {
        byte[] b = new byte[SIZE];
        Arrays.fill(b, (byte) value);
        return ByteBuffer.wrap(b);
    }

    private byte[] stored(StateKey key) {
        Residence r = tiers.residences(key).getFirst();
        var pin = (PayloadSource.PinResult.Pinned) tiers.pin(key, Medium.DRAM, r.sequence());
        try {
            ByteBuffer out = ByteBuffer.allocate((int) r.sizeBytes());
            assertThat(pin.copyTo(out)).isInstanceOf(PayloadSource.CopyOutcome.Copied.class);
            return out.array();
        } finally {
            pin.release();
        }
    }

    @Test
    @DisplayName("ROUTE-12 the estimate keeps a block that fits free space and refuses one that evicts as much as it saves")
    void reuseBenefitEstimate() {
        assertThat(Retention.worthKeeping(SIZE, 1 << 20, 10)).as("free space: copy cost only").isTrue();
        assertThat(Retention.worthKeeping(SIZE, 0, 10)).as("evicts a whole block: no benefit").isFalse();
        assertThat(Retention.worthKeeping(SIZE, SIZE - 200, 10)).as("evicts 264 of 4000 bytes plus 400 copy").isTrue();
        assertThat(Retention.worthKeeping(SIZE, SIZE - 400, 10)).as("evicts 464 plus 400 copy: still below 4000")
                .isTrue();
        assertThat(Retention.worthKeeping(SIZE, 0, 0)).as("even a free copy does not pay a full eviction").isFalse();
        assertThat(Retention.worthKeeping(SIZE, 1 << 20, 100)).as("a copy as dear as the fetch never pays").isFalse();
    }

    @Test
    @DisplayName("ROUTE-12 a kept block is a DRAM residence with a journal put and exactly the verified bytes; a second keep is already-local")
    void keptLikeASave() {
        Retention retention = new Retention(tiers, 10);
        long head = sequence.headSequence();
        assertThat(retention.keep(key(1), bytes(0x51), Retention.Cause.STORE_LOCAL)).isNull();
        assertThat(sequence.headSequence()).as("one journal put").isEqualTo(head + 1);
        assertThat(tiers.residences(key(1))).extracting(Residence::medium).containsExactly(Medium.DRAM);
        assertThat(stored(key(1))).isEqualTo(bytes(0x51).array());
        assertThat(retention.keep(key(1), bytes(0x52), Retention.Cause.STORE_LOCAL))
                .isEqualTo(Retention.Refusal.ALREADY_LOCAL);
        assertThat(stored(key(1))).as("nothing changed").isEqualTo(bytes(0x51).array());
        Retention.Figures f = retention.figures();
        assertThat(f.keptBlocks().get(Retention.Cause.STORE_LOCAL)).isEqualTo(1);
        assertThat(f.keptBytes().get(Retention.Cause.STORE_LOCAL)).isEqualTo(SIZE);
        assertThat(f.refusals().get(Retention.Refusal.ALREADY_LOCAL)).isEqualTo(1);
    }

    @Test
    @DisplayName("ROUTE-12 a full tier refuses by name (no-reuse-benefit): nothing is evicted, nothing stored, the journal unchanged")
    void fullTierRefused() {
        int i = 0;
        while (tiers.dram().usage().capacityBytes() - tiers.dram().usage().allocatedBytes() >= 4096) {
            assertThat(tiers.save(key(100 + i), new byte[4096]).getClass().getSimpleName()).isEqualTo("Stored");
            i++;
        }
        assertThat(tiers.dram().usage().capacityBytes()).isEqualTo(tiers.dram().usage().allocatedBytes());
        long blocks = tiers.dram().usage().blocks();
        long head = sequence.headSequence();
        Retention retention = new Retention(tiers, 10);
        assertThat(retention.keep(key(1), bytes(0x51), Retention.Cause.STORE_LOCAL))
                .isEqualTo(Retention.Refusal.NO_REUSE_BENEFIT);
        assertThat(tiers.residences(key(1))).isEmpty();
        assertThat(tiers.dram().usage().blocks()).isEqualTo(blocks);
        assertThat(sequence.headSequence()).isEqualTo(head);
        assertThat(retention.figures().refusals().get(Retention.Refusal.NO_REUSE_BENEFIT)).isEqualTo(1);
    }

    private RestoreResult restore(Speculation s, boolean storeLocal, List<StateKey> keys) {
        return f.restoration(keys, true, storeLocal).with(s).run();
    }

    @Test
    @DisplayName("ROUTE-12 a restore keeps the peer blocks it fetched only with store_local; a demand fetch alone keeps nothing")
    void storeLocalOnly() {
        try (Speculation s = new Speculation(tiers, SpeculationOptions.DEFAULTS, UnpooledByteBufAllocator.DEFAULT)) {
            RestoreResult plain = restore(s, false, List.of(key(1), key(2)));
            assertThat(plain.restoredKeys()).isEqualTo(2);
            plain.release();
            assertThat(tiers.residences(key(1))).as("not asked: not kept").isEmpty();

            long head = sequence.headSequence();
            RestoreResult kept = restore(s, true, List.of(key(1), key(2)));
            assertThat(kept.restoredKeys()).isEqualTo(2);
            kept.release();
            assertThat(sequence.headSequence()).as("two journal puts").isEqualTo(head + 2);
            byte[] expected = new byte[SIZE];
            Arrays.fill(expected, (byte) 0x61);
            assertThat(stored(key(2))).as("the READ's verified bytes").isEqualTo(expected);
            assertThat(s.figures().retention().keptBlocks().get(Retention.Cause.STORE_LOCAL)).isEqualTo(2);
        }
    }
}
