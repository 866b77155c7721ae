package orbitkv.index.view;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.Scope;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The staging table built at commit from a bootstrap's pages (SNAP-2: distinct rows in key order), side by
 * side: rows inserted in arrival order (the session 2 build) versus {@link ResidenceTable#ofDistinctRows}
 * (home-slot partitioned, forced at every size). Pages of 1,024 rows, 32-byte keys (the bench harness's block
 * keys), one namespace; time per whole build. Run with {@code -gc true}: repeated 60-90 MB humongous builds
 * otherwise measure G1 more than the build (without it both variants drift from 90 to 170-240 ms per build).
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5)
@Measurement(iterations = 15)
@Fork(value = 1, jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
public class StagingBuildBenchmark {
    @Param({"100000", "200000", "1000000"})
    int rows;

    List<PreparedFrame> pages;
    List<RecordBatch> batches;
    NamespaceTable namespaces;

    @Setup
    public void setUp() {
        Namespace ns = Namespace.utf8("bench/llama-3-8b/fp16");
        namespaces = new NamespaceTable();
        pages = new ArrayList<>();
        batches = new ArrayList<>();
        for (int done = 0; done < rows; done += 1024) {
            int n = Math.min(1024, rows - done);
            RecordBatch.Builder b = RecordBatch.builder(n);
            int j = b.namespace(ns);
            for (int r = 0; r < n; r++) {
                long i = done + r;
                byte[] key = new byte[32];
                for (int k = 0; k < 8; k++) {
                    key[k] = (byte) (i >>> (56 - 8 * k));
                }
                key[31] = 0x5a;
                b.add(j, key, 0, key.length, i % 2 == 0 ? Medium.DRAM : Medium.SSD, false, i + 1, 4096);
            }
            RecordBatch batch = b.build();
            batches.add(batch);
            pages.add(PreparedFrame.page(batch, Scope.all(), namespaces));
        }
    }

    @Benchmark
    public ResidenceTable arrivalOrder() {
        ResidenceTable t = new ResidenceTable(rows);
        for (PreparedFrame f : pages) {
            for (int i = 0; i < f.rows(); i++) {
                t.insert(f.tag(i), f.key(i), f.hash(i), f.sequence(i), f.size(i));
            }
        }
        return t;
    }

    /**
     * Preparing every page as it arrives ({@link PreparedFrame#page}: checks, interned namespace, key copy and
     * hash per row), the part of {@code stagePage} before the transcript digest. The batches' order check is
     * remembered from setup, as in a session, whose decoder has already made it.
     */
    @Benchmark
    public int preparePages() {
        int rowsPrepared = 0;
        for (RecordBatch b : batches) {
            rowsPrepared += PreparedFrame.page(b, Scope.all(), namespaces).rows();
        }
        return rowsPrepared;
    }

    @Benchmark
    public ResidenceTable homeSlotPartitioned() {
        return ResidenceTable.ofDistinctRows(rows, new ArrayDeque<>(pages), 0); // always partitioned, caller only
    }

    /** The same build with each pass split between the caller and the common pool (what a commit does). */
    @Benchmark
    public ResidenceTable homeSlotPartitionedTwoThreads() {
        return ResidenceTable.ofDistinctRows(rows, new ArrayDeque<>(pages), 0, java.util.concurrent.ForkJoinPool.commonPool());
    }
}
