package orbitkv.inventory.source;

import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.StateKey;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Bytes per journal entry: retained heap (after GC) of a journal holding 500,000 entries whose records
 * and 32-byte StateKeys are referenced only by the journal (the worst case: residences already deleted
 * from the map), one shared namespace. Reported as auxiliary counters {@code measuredBytesPerEntry}
 * (heap delta / entries) next to {@code accountedBytesPerEntry} (the documented formula
 * {@code JOURNAL_ENTRY_FIXED_BYTES + key + namespace}). The primary score (time to fill) is incidental.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@Warmup(iterations = 1)
@Measurement(iterations = 3)
public class JournalFootprintBenchmark {
    static final int ENTRIES = 500_000;

    /** Counters JMH reports per iteration. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Footprint {
        public long measuredBytesPerEntry;
        public long accountedBytesPerEntry;

        @Setup(Level.Iteration)
        public void reset() {
            measuredBytesPerEntry = 0;
            accountedBytesPerEntry = 0;
        }
    }

    static long usedAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    @Benchmark
    public Journal fill(Footprint f) {
        Namespace ns = Namespace.utf8("model-a/representation-1");
        long before = usedAfterGc();
        Journal journal = new Journal(ENTRIES, 1L << 40);
        for (int i = 1; i <= ENTRIES; i++) {
            byte[] k = new byte[32];
            k[0] = (byte) i;
            k[1] = (byte) (i >> 8);
            k[2] = (byte) (i >> 16);
            journal.append(ResidenceRecord.put(new StateKey(ns, k), Medium.DRAM, i, 4096));
        }
        long after = usedAfterGc();
        f.measuredBytesPerEntry = (after - before) / ENTRIES;
        f.accountedBytesPerEntry = journal.bytes() / journal.size();
        if (journal.size() != ENTRIES || journal.bytes() != (long) ENTRIES * (InventoryConfig.JOURNAL_ENTRY_FIXED_BYTES + 32 + ns.length())) {
            throw new IllegalStateException("unexpected journal accounting");
        }
        return journal;
    }
}
