package orbitkv.inventory.source;

import java.util.List;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SnapshotScan;
import orbitkv.inventory.StateKey;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Snapshot page scan in scanned resident records/s: 100,000 residences over 16 namespaces, default pages
 * (1,024 records / 512 KiB), scope = all or one of the 16 namespaces (the seek skips the others).
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class PageScanBenchmark {
    static final int RESIDENCES = 100_000;

    @Param({"all", "one-of-16"})
    public String scope;

    InventorySource source;
    Scope readScope;
    int expected;

    @Setup
    public void setup() {
        source = InventorySource.create(InventoryConfig.defaults());
        for (int i = 0; i < RESIDENCES; i++) {
            byte[] k = new byte[32];
            k[0] = (byte) (i >> 16);
            k[1] = (byte) (i >> 8);
            k[2] = (byte) i;
            source.put(new StateKey(Namespace.utf8("ns-" + (i % 16)), k), Medium.DRAM, 4096);
        }
        readScope = scope.equals("all") ? Scope.all() : Scope.of(List.of(Namespace.utf8("ns-3")));
        expected = scope.equals("all") ? RESIDENCES : RESIDENCES / 16;
    }

    @Benchmark
    @OperationsPerInvocation(RESIDENCES)
    public long scanAllPages() {
        SnapshotScan scan = source.openSnapshot(readScope);
        long records = 0;
        for (SnapshotScan.ScanStep s = scan.nextPage(); s instanceof SnapshotScan.ScanStep.Page p; s = scan.nextPage()) {
            records += p.records().size();
        }
        if (records != expected) {
            throw new IllegalStateException("scanned " + records + ", expected " + expected);
        }
        return records;
    }
}
