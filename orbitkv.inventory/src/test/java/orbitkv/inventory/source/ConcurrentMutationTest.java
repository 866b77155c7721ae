package orbitkv.inventory.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.CoalescedInterval;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ReadOutcome;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SnapshotScan;
import orbitkv.inventory.StateKey;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class ConcurrentMutationTest {
    @Test
    @DisplayName("INV-3 INV-4 PERF-1 mutations from several threads get unique contiguous sequences; the journal replays to the resident map")
    void concurrentWriters() throws Exception {
        InventorySource source = InventorySource.create(InventoryConfig.defaults());
        int threads = 4;
        int perThread = 5000;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<List<Long>>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            results.add(pool.submit(() -> {
                start.await();
                List<Long> seqs = new ArrayList<>();
                Namespace ns = Namespace.utf8("t" + id);
                for (int i = 0; i < perThread; i++) {
                    StateKey k = new StateKey(ns, new byte[] {(byte) (i % 37)});
                    MutationResult r = i % 3 == 2 ? source.delete(k, Medium.DRAM) : source.put(k, Medium.DRAM, i);
                    if (r instanceof MutationResult.Recorded rec) {
                        seqs.add(rec.sequence());
                        assertThat(rec.publishedMonoNanos()).isNotZero();
                    }
                }
                return seqs;
            }));
        }
        List<Long> all = new ArrayList<>();
        for (Future<List<Long>> f : results) {
            List<Long> own = f.get(60, TimeUnit.SECONDS);
            assertThat(own).as("each writer sees increasing sequences").isSorted();
            all.addAll(own);
        }
        pool.shutdown();
        long head = source.headSequence();
        assertThat(all).hasSize((int) head).doesNotHaveDuplicates().allMatch(s -> s >= 1 && s <= head);
        assertThat(source.lastPublication().sequence()).isEqualTo(head);

        Map<String, ResidenceRecord> replayed = new HashMap<>();
        long cursor = 0;
        while (cursor < head) {
            ReadOutcome.Intervals iv = (ReadOutcome.Intervals) source.read(cursor, Scope.all(), 64);
            for (CoalescedInterval ci : iv.intervals()) {
                for (ResidenceRecord r : ci.records()) {
                    if (r.isDelete()) {
                        replayed.remove(r.key() + "/" + r.medium());
                    } else {
                        replayed.put(r.key() + "/" + r.medium(), r);
                    }
                }
            }
            cursor = iv.endCursor(cursor);
        }
        Map<String, ResidenceRecord> scanned = new HashMap<>();
        SnapshotScan scan = source.openSnapshot(Scope.all());
        for (SnapshotScan.ScanStep s = scan.nextPage(); s instanceof SnapshotScan.ScanStep.Page p; s = scan.nextPage()) {
            p.records().forEach(r -> scanned.put(r.key() + "/" + r.medium(), r));
        }
        assertThat(replayed).isEqualTo(scanned);
    }

    @Test
    @DisplayName("BND-5 INV-1 readers never block writers: a concurrent reader and writer both finish, the reader sees only whole intervals")
    void readerAndWriter() throws Exception {
        InventorySource source = InventorySource.create(InventoryConfig.defaults().withJournalRecordsMax(2000));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        Future<Long> writer = pool.submit(() -> {
            for (int i = 0; i < 50_000; i++) {
                source.put(new StateKey(Namespace.utf8("w"), new byte[] {(byte) i, (byte) (i >> 8)}), Medium.SSD, i);
            }
            return source.headSequence();
        });
        Future<Integer> reader = pool.submit(() -> {
            long cursor = 0;
            int trims = 0;
            while (cursor < 50_000) {
                switch (source.read(cursor, Scope.all(), 8)) {
                    case ReadOutcome.Intervals iv -> {
                        for (CoalescedInterval ci : iv.intervals()) {
                            assertThat(ci.interval().from()).isEqualTo(cursor);
                            cursor = ci.interval().to();
                        }
                    }
                    case ReadOutcome.Trimmed t -> {
                        trims++;
                        cursor = t.oldestRetainedSequence() - 1; // a real reader bootstraps; here we skip ahead
                    }
                    default -> throw new AssertionError("unexpected outcome");
                }
            }
            return trims;
        });
        assertThat(writer.get(60, TimeUnit.SECONDS)).isEqualTo(50_000);
        assertThat(reader.get(60, TimeUnit.SECONDS)).isGreaterThanOrEqualTo(0);
        pool.shutdown();
    }
}
