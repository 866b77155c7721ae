package orbitkv.inventory.source;

import java.util.concurrent.TimeUnit;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;

/**
 * The full mutation path (sequence, resident-map change, journal append with trimming at the default
 * 1,000,000-record bound, publication stamp, broadcast signal) with 1 and 2 writer threads. Keys cycle
 * over 65,536 residences of 32-byte keys, so the resident map stays at 65,536 rows and the journal trims
 * in steady state.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class JournalAppendBenchmark {
    static final int KEYS = 1 << 16;
    InventorySource source;
    StateKey[] keys;

    @Setup
    public void setup() {
        source = InventorySource.create(InventoryConfig.defaults());
        keys = new StateKey[KEYS];
        Namespace ns = Namespace.utf8("model-a/representation-1");
        for (int i = 0; i < KEYS; i++) {
            byte[] k = new byte[32];
            k[0] = (byte) i;
            k[1] = (byte) (i >> 8);
            keys[i] = new StateKey(ns, k);
        }
    }

    /** Per-thread position in the key cycle. */
    @State(Scope.Thread)
    public static class Cursor {
        int next;
    }

    @Benchmark
    @Threads(1)
    public MutationResult put1Writer(Cursor c) {
        return source.put(keys[c.next++ & (KEYS - 1)], Medium.DRAM, 4096);
    }

    @Benchmark
    @Threads(2)
    public MutationResult put2Writers(Cursor c) {
        return source.put(keys[c.next++ & (KEYS - 1)], Medium.DRAM, 4096);
    }
}
