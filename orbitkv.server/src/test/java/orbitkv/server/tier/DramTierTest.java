package orbitkv.server.tier;

import static orbitkv.server.tier.Payloads.key;
import static orbitkv.server.tier.Payloads.payload;
import static orbitkv.server.tier.Payloads.pin;
import static orbitkv.server.tier.Payloads.read;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import orbitkv.inventory.Medium;
import orbitkv.transfer.PayloadSource.PinResult;
import orbitkv.inventory.StateKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class DramTierTest {
    @TempDir
    Path dir;

    private final RecordingListener listener = new RecordingListener();
    private DramTier tier;

    private DramTier open(long bytes, int pins) throws Exception {
        tier = DramTier.open(dir, bytes, pins, listener);
        return tier;
    }

    @AfterEach
    void close() throws Exception {
        if (tier != null) {
            tier.close();
        }
    }

    @Test
    @DisplayName("INV-1 PERF-4 saved blocks read back byte-exactly with the listener's contiguous sequences")
    void roundTrip() throws Exception {
        open(64 * 1024, 8);
        for (int i = 0; i < 10; i++) {
            SaveOutcome out = tier.put(key(i), payload(1, i, 100 + i));
            assertThat(out).isEqualTo(new SaveOutcome.Stored(Medium.DRAM, i + 1, 100 + i));
        }
        for (int i = 0; i < 10; i++) {
            assertThat(read(pin(tier, key(i)))).isEqualTo(payload(1, i, 100 + i));
        }
        assertThat(pin(tier, key(99))).isInstanceOf(PinResult.NotResident.class);
        assertThat(tier.usage().blocks()).isEqualTo(10);
    }

    @Test
    @DisplayName("the arena is one file in the configured directory, deleted on close")
    void arenaFile() throws Exception {
        open(4096, 1);
        Path file = tier.arenaFile();
        assertThat(file.getParent()).isEqualTo(dir);
        assertThat(file.getFileName().toString()).matches("orbitkv-dram-test-[0-9a-f]{16}\\.arena");
        assertThat(Files.size(file)).isEqualTo(4096);
        tier.close();
        assertThat(file).doesNotExist();
        assertThat(tier.put(key(1), payload(1, 1, 16))).isInstanceOf(SaveOutcome.Refused.class);
        tier = null;
    }

    @Test
    @DisplayName("INV-3 a new block that does not fit evicts whole blocks in LRU order, each reported as a DRAM delete")
    void lruEviction() throws Exception {
        open(4 * 64, 8);
        for (int i = 0; i < 4; i++) {
            tier.put(key(i), payload(1, i, 64));
        }
        read(pin(tier, key(0))); // key 0 becomes most recently used
        tier.put(key(4), payload(1, 4, 64));
        assertThat(listener.deletes()).containsExactly("DRAM:" + key(1).keyHex());
        assertThat(tier.contains(key(0))).isTrue();
        assertThat(tier.contains(key(1))).isFalse();
        SaveOutcome again = tier.put(key(1), payload(2, 1, 64));
        assertThat(((SaveOutcome.Stored) again).sequence()).as("a re-saved key takes a new sequence")
                .isEqualTo(listener.headSequence());
        assertThat(tier.counters().evictedTotal()).isEqualTo(2);
    }

    @Test
    @DisplayName("INV-9 pinned blocks are skipped by LRU; with nothing evictable the save is refused and nothing changes")
    void pinnedSkippedThenRefused() throws Exception {
        open(2 * 64, 4);
        tier.put(key(0), payload(1, 0, 64));
        tier.put(key(1), payload(1, 1, 64));
        PinResult.Pinned p0 = (PinResult.Pinned) pin(tier, key(0));
        tier.put(key(2), payload(1, 2, 64));
        assertThat(listener.deletes()).containsExactly("DRAM:" + key(1).keyHex());
        PinResult.Pinned p2 = (PinResult.Pinned) pin(tier, key(2));
        int before = listener.events.size();
        SaveOutcome refused = tier.put(key(3), payload(1, 3, 64));
        assertThat(refused).isInstanceOf(SaveOutcome.Refused.class);
        assertThat(((SaveOutcome.Refused) refused).reason()).isEqualTo(TierRefusal.NO_EVICTABLE_SPACE);
        assertThat(listener.events).hasSize(before);
        assertThat(tier.contains(key(0))).isTrue();
        p0.release();
        p0.release(); // idempotent
        p2.release();
        assertThat(tier.put(key(3), payload(1, 3, 64))).isInstanceOf(SaveOutcome.Stored.class);
        assertThat(tier.counters().refusedTotal(TierRefusal.NO_EVICTABLE_SPACE)).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-9 the pin count is bounded: beyond pinsMax a read is refused explicitly")
    void pinsBounded() throws Exception {
        open(4096, 2);
        tier.put(key(0), payload(1, 0, 64));
        PinResult a = pin(tier, key(0));
        PinResult b = pin(tier, key(0));
        PinResult c = pin(tier, key(0));
        assertThat(c).isEqualTo(new PinResult.PinLimit(2, 4096));
        assertThat(tier.counters().refusedTotal(TierRefusal.PINS_EXHAUSTED)).isEqualTo(1);
        ((PinResult.Pinned) a).release();
        assertThat(read(pin(tier, key(0)))).isEqualTo(payload(1, 0, 64));
        ((PinResult.Pinned) b).release();
        assertThat(tier.usage().pinsHeld()).isZero();
    }

    @Test
    @DisplayName("a block larger than the tier is refused explicitly")
    void blockExceedsTier() throws Exception {
        open(1024, 2);
        SaveOutcome out = tier.put(key(0), new byte[1025]);
        assertThat(out).isEqualTo(new SaveOutcome.Refused(TierRefusal.BLOCK_EXCEEDS_TIER,
                "block of 1025 bytes exceeds the DRAM tier of 1024 bytes"));
        assertThat(listener.events).isEmpty();
    }

    @Test
    @DisplayName("fragmentation: a larger block evicts LRU blocks until a contiguous extent appears")
    void fragmentation() throws Exception {
        open(16 * 64, 4);
        for (int i = 0; i < 16; i++) {
            tier.put(key(i), payload(1, i, 64));
        }
        for (int i = 0; i < 16; i += 2) {
            tier.evict(key(i));
        }
        assertThat(tier.fragmentation()).containsExactly(8, 64);
        int deletesBefore = listener.deletes().size();
        assertThat(tier.put(key(100), payload(1, 100, 128))).isInstanceOf(SaveOutcome.Stored.class);
        // LRU order of survivors is 1,3,5,...: evicting key 1 joins [0,64) [64,128) [128,192).
        assertThat(listener.deletes().subList(deletesBefore, listener.deletes().size()))
                .containsExactly("DRAM:" + key(1).keyHex());
        assertThat(tier.usage().allocatedBytes()).isEqualTo(7 * 64 + 128);
    }

    @Test
    @DisplayName("overwriting a pinned block keeps the reader's bytes until its pin closes, then frees them")
    void overwritePinned() throws Exception {
        open(4 * 64, 4);
        tier.put(key(0), payload(1, 0, 64));
        PinResult.Pinned old = (PinResult.Pinned) pin(tier, key(0));
        tier.put(key(0), payload(2, 0, 64));
        assertThat(tier.usage().allocatedBytes()).isEqualTo(128);
        assertThat(tier.usage().residentBytes()).isEqualTo(64);
        assertThat(read(old)).isEqualTo(payload(1, 0, 64));
        assertThat(tier.usage().allocatedBytes()).isEqualTo(64);
        assertThat(read(pin(tier, key(0)))).isEqualTo(payload(2, 0, 64));
        assertThat(listener.deletes()).as("a put replaces without a delete record").isEmpty();
    }

    @Test
    @DisplayName("INV-3 random puts/evicts/reads: tier contents equal the listener's resident map and read back exactly")
    void randomAgainstListenerModel() throws Exception {
        open(32 * 64, 8);
        Random random = new Random(42);
        Map<StateKey, byte[]> lastSaved = new HashMap<>();
        for (int step = 0; step < 3000; step++) {
            StateKey k = key(random.nextInt(64));
            switch (random.nextInt(4)) {
                case 0, 1 -> {
                    byte[] p = payload(step, k.key()[1], 16 + random.nextInt(200));
                    if (tier.put(k, p) instanceof SaveOutcome.Stored) {
                        lastSaved.put(k, p);
                    }
                }
                case 2 -> tier.evict(k);
                default -> {
                    PinResult o = pin(tier, k);
                    if (o instanceof PinResult.Pinned) {
                        assertThat(read(o)).isEqualTo(lastSaved.get(k));
                    }
                }
            }
            assertThat(tier.usage().blocks()).isEqualTo(listener.resident.size());
        }
        for (String resident : listener.resident.keySet()) {
            assertThat(resident).startsWith("DRAM:");
        }
        assertThat(tier.usage().allocatedBytes()).isLessThanOrEqualTo(32 * 64);
    }

    @Test
    @DisplayName("INV-9 concurrent savers and readers always read a complete payload of the key they asked for")
    void concurrentSaversAndReaders() throws Exception {
        open(64 * 256, 16);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int seed = t;
                results.add(pool.submit(() -> {
                    Random r = new Random(seed);
                    int verified = 0;
                    for (int i = 0; i < 2000; i++) {
                        int k = r.nextInt(100);
                        if (r.nextBoolean()) {
                            tier.put(key(k), payload(r.nextInt(1000), k, 256));
                        } else {
                            PinResult o = pin(tier, key(k));
                            if (o instanceof PinResult.Pinned) {
                                byte[] got = read(o);
                                long gen = java.nio.ByteBuffer.wrap(got).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(0);
                                assertThat(got).isEqualTo(payload(gen, k, 256));
                                verified++;
                            }
                        }
                    }
                    return verified;
                }));
            }
            int verified = 0;
            for (Future<Integer> f : results) {
                verified += f.get();
            }
            assertThat(verified).isPositive();
            assertThat(tier.usage().pinsHeld()).isZero();
            assertThat(tier.usage().blocks()).isEqualTo(listener.resident.size());
        } finally {
            pool.shutdownNow();
        }
    }
}
