package orbitkv.server.tier;

import static orbitkv.server.tier.Payloads.key;
import static orbitkv.server.tier.Payloads.payload;
import static orbitkv.server.tier.Payloads.read;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SnapshotScan;
import orbitkv.inventory.StateKey;
import orbitkv.transfer.PayloadSource.PinResult;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A healed incarnation's new source lineage (issue 17 item 5, INV-7, INV-3): {@link LocalTiers#republish}
 * puts every cached DRAM and SSD residence into the new source under fresh sequences, the tiers answer with
 * those sequences, the bytes stay, and the old lineage's generations are stale. The oracle is the tiers'
 * own residences read independently of the source, compared with a full scan of the new source.
 */
@Tag("unit")
class LineageRepublishTest {
    private static final int BLOCK = 256;

    /** Every residence a full scan of {@code source} finds: (key, medium) → sequence. */
    private static Map<String, Long> scan(InventorySource source) {
        Map<String, Long> out = new HashMap<>();
        SnapshotScan scan = source.openSnapshot(Scope.all());
        while (scan.nextPage() instanceof SnapshotScan.ScanStep.Page p) {
            for (ResidenceRecord r : p.records()) {
                out.put(id(r.key(), r.medium()), r.sequence());
            }
        }
        return out;
    }

    private static String id(StateKey k, Medium m) {
        return java.util.HexFormat.of().formatHex(k.key()) + "/" + m;
    }

    /** What the tiers hold: (key, medium) → sequence, read from the tiers, not the source. */
    private static Map<String, Long> tierState(LocalTiers tiers, int keys) {
        Map<String, Long> out = new HashMap<>();
        for (int i = 0; i < keys; i++) {
            for (Residence r : tiers.residences(key(i))) {
                out.put(id(key(i), r.medium()), r.sequence());
            }
        }
        return out;
    }

    @Test
    @DisplayName("INV-7 INV-3 a new lineage holds exactly the cached DRAM and SSD residences under fresh sequences; bytes stay, old generations are stale")
    void republishMovesEveryResidence(@TempDir Path dir) throws Exception {
        InventorySource old = InventorySource.create(InventoryConfig.defaults());
        SourceResidency residency = new SourceResidency(old);
        Path ssdDir = Files.createDirectories(dir.resolve("ssd"));
        try (LocalTiers tiers = new LocalTiers(DramTier.open(dir, 64 * BLOCK, 64, residency),
                SsdTier.open(ssdDir, 64 * BLOCK, 16, 64, 64 * BLOCK, residency), residency)) {
            for (int i = 0; i < 6; i++) {
                assertThat(tiers.save(key(i), payload(1, i, BLOCK))).isInstanceOf(SaveOutcome.Stored.class);
            }
            assertThat(tiers.awaitSubmittedSaves(10_000)).isTrue();
            assertThat(tiers.evict(key(0), LocalTiers.EvictTarget.DRAM)).isEqualTo(1);
            assertThat(tiers.evict(key(1), LocalTiers.EvictTarget.SSD)).isEqualTo(1);
            Map<String, Long> before = tierState(tiers, 6);
            long oldHead = old.headSequence();

            InventorySource next = InventorySource.create(InventoryConfig.defaults());
            int republished = tiers.republish(() -> residency.switchTo(next));

            Map<String, Long> after = tierState(tiers, 6);
            assertThat(republished).isEqualTo(before.size()).isEqualTo(10); // 5 DRAM + 5 SSD
            assertThat(after.keySet()).isEqualTo(before.keySet());
            assertThat(scan(next)).as("the new source holds exactly what the tiers hold").isEqualTo(after);
            assertThat(new HashSet<>(after.values())).as("fresh, distinct sequences from 1").hasSize(10)
                    .allSatisfy(s -> assertThat(s).isBetween(1L, 10L));
            assertThat(next.headSequence()).isEqualTo(10);
            assertThat(old.headSequence()).as("the old lineage is left as it was").isEqualTo(oldHead);
            assertThat(tiers.headSequence()).isEqualTo(10);

            for (int i = 1; i < 6; i++) {
                long fresh = after.get(id(key(i), Medium.DRAM));
                assertThat(read(tiers.pin(key(i), Medium.DRAM, fresh))).isEqualTo(payload(1, i, BLOCK));
                assertThat(tiers.pin(key(i), Medium.DRAM, before.get(id(key(i), Medium.DRAM))))
                        .as("an old-lineage generation is stale").isInstanceOf(PinResult.StaleGeneration.class);
            }
            long ssdFresh = after.get(id(key(0), Medium.SSD));
            assertThat(read(tiers.pin(key(0), Medium.SSD, ssdFresh))).isEqualTo(payload(1, 0, BLOCK));

            assertThat(((SaveOutcome.Stored) tiers.save(key(7), payload(2, 7, BLOCK))).sequence())
                    .as("later saves continue the new lineage").isEqualTo(11);
        }
    }

    @Test
    @DisplayName("INV-7 republish under concurrent saves and evictions: the new source ends equal to the tiers (seeded)")
    void republishUnderChurn(@TempDir Path dir) throws Exception {
        long seed = Long.getLong("orbitkv.seed", 20240617L);
        System.out.println("LineageRepublishTest.republishUnderChurn seed=" + seed + " (replay: -Dorbitkv.seed=" + seed + ")");
        for (int round = 0; round < 20; round++) {
            InventorySource old = InventorySource.create(InventoryConfig.defaults());
            SourceResidency residency = new SourceResidency(old);
            Path ssdDir = Files.createDirectories(dir.resolve("ssd-" + round));
            int keys = 40;
            try (LocalTiers tiers = new LocalTiers(DramTier.open(dir, 32 * BLOCK, 64, residency),
                    SsdTier.open(ssdDir, 24 * BLOCK, 16, 64, 64 * BLOCK, residency), residency)) {
                CountDownLatch go = new CountDownLatch(1);
                List<Thread> workers = new ArrayList<>();
                for (int w = 0; w < 2; w++) {
                    SplittableRandom r = new SplittableRandom(seed + 31L * round + w);
                    workers.add(Thread.ofPlatform().start(() -> {
                        try {
                            go.await();
                        } catch (InterruptedException e) {
                            return;
                        }
                        for (int op = 0; op < 300; op++) {
                            int k = r.nextInt(keys);
                            if (r.nextInt(4) == 0) {
                                tiers.evict(key(k), LocalTiers.EvictTarget.values()[r.nextInt(3)]);
                            } else {
                                tiers.save(key(k), payload(op, k, BLOCK));
                            }
                        }
                    }));
                }
                InventorySource next = InventorySource.create(InventoryConfig.defaults());
                go.countDown();
                tiers.republish(() -> residency.switchTo(next));
                for (Thread t : workers) {
                    t.join();
                }
                assertThat(tiers.awaitSubmittedSaves(10_000)).isTrue();
                Map<String, Long> tiersNow = tierState(tiers, keys);
                assertThat(scan(next)).as("seed %d round %d", seed, round).isEqualTo(tiersNow);
                Set<Long> seqs = new HashSet<>(tiersNow.values());
                assertThat(seqs).hasSize(tiersNow.size());
            }
        }
    }
}
