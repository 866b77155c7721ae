package orbitkv.inventory.source;

import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ReadOutcome;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.StateKey;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Coalescing throughput in input records/s over one full 1,024-record input interval, at 0/50/90 %
 * repeated-key churn (that share of the records hit a hot set of 16 residences, the rest are distinct).
 * {@code coalesce} is the pure coalescer; {@code readInterval} is the whole reader path: copy under the
 * lock, coalesce, build the v4 Delta and measure its frame.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class CoalesceBenchmark {
    static final int N = 1024;

    @Param({"0", "50", "90"})
    public int churnPercent;

    ResidenceRecord[] input;
    InventorySource source;

    @Setup
    public void setup() {
        SplittableRandom random = new SplittableRandom(42);
        Namespace ns = Namespace.utf8("model-a/representation-1");
        source = InventorySource.create(InventoryConfig.defaults());
        input = new ResidenceRecord[N];
        for (int i = 0; i < N; i++) {
            int id = random.nextInt(100) < churnPercent ? random.nextInt(16) : 1000 + i;
            byte[] k = new byte[32];
            k[0] = (byte) id;
            k[1] = (byte) (id >> 8);
            StateKey key = new StateKey(ns, k);
            source.put(key, Medium.DRAM, 4096);
            input[i] = ResidenceRecord.put(key, Medium.DRAM, i + 1, 4096);
        }
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public List<ResidenceRecord> coalesce() {
        return Coalescer.coalesce(input, N, orbitkv.inventory.Scope.all());
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public ReadOutcome readInterval() {
        return source.read(0, orbitkv.inventory.Scope.all(), 1);
    }
}
