package orbitkv.index.view;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import orbitkv.index.LookupOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.StateKey;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * GlobalIndex hot paths (DIAG-3, IDX-1, DELTA-2): delta apply throughput in records/s, and 32-key lookup
 * latency idle versus during maximal apply load (a writer thread applying 1,024-record frames back to back).
 * 16 owners x 32,768 rows of 32-byte keys; lookups mix present and absent keys.
 */
@State(Scope.Group)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class GlobalIndexBenchmark {
    static final int OWNERS = 16;
    static final int ROWS_PER_OWNER = 32_768;
    static final int FRAME_RECORDS = 1024;
    static final int LOOKUP_KEYS = 32;

    BenchWorld world;
    List<List<StateKey>> lookups;
    int nextLookup;
    long applyFrame;

    @Setup(Level.Trial)
    public void setUp() {
        world = new BenchWorld(OWNERS, 256L << 20);
        for (int o = 0; o < OWNERS; o++) {
            world.install(o, ROWS_PER_OWNER);
        }
        lookups = new ArrayList<>();
        java.util.Random rnd = new java.util.Random(7);
        for (int l = 0; l < 1024; l++) {
            List<StateKey> ks = new ArrayList<>(LOOKUP_KEYS);
            for (int k = 0; k < LOOKUP_KEYS; k++) {
                ks.add(BenchWorld.key(rnd.nextInt(2 * ROWS_PER_OWNER))); // about half present
            }
            lookups.add(ks);
        }
    }

    /** Prints the lock-hold histograms' bucket bounds at p50/p99 (IDX-1, DIAG-3) for the trial. */
    @TearDown(Level.Trial)
    public void printLockHolds() {
        var a = world.index.applyLockHold();
        var l = world.index.lookupLockHold();
        System.out.printf("%nlock holds: apply n=%d p50<=%dns p99<=%dns; lookup n=%d p50<=%dns p99<=%dns%n",
                a.total(), a.quantileUpperBoundNanos(0.5), a.quantileUpperBoundNanos(0.99),
                l.total(), l.quantileUpperBoundNanos(0.5), l.quantileUpperBoundNanos(0.99));
    }

    /** One 1,024-record frame to owner 0: overwrites of existing keys with fresh sequences (validated, then applied). */
    DeltaOutcome applyOneFrame() {
        long from = world.cursors[0];
        List<ResidenceRecord> recs = new ArrayList<>(FRAME_RECORDS);
        long base = (applyFrame++ * FRAME_RECORDS) % ROWS_PER_OWNER;
        for (int i = 0; i < FRAME_RECORDS; i++) {
            recs.add(ResidenceRecord.put(BenchWorld.key(base + i), Medium.DRAM, from + i + 1, 4096));
        }
        DeltaOutcome out = world.index.applyDelta(world.owners[0], world.views[0], applyFrame + 1,
                Interval.of(from, from + FRAME_RECORDS), recs);
        world.cursors[0] = from + FRAME_RECORDS;
        return out;
    }

    LookupOutcome lookupOnce() {
        List<StateKey> ks = lookups.get(nextLookup++ & 1023);
        return world.index.lookup(ks);
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(FRAME_RECORDS)
    @Group("apply")
    public DeltaOutcome applyRecords() {
        return applyOneFrame();
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @Group("lookupIdle")
    public LookupOutcome lookupIdle() {
        return lookupOnce();
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @Group("lookupUnderApply")
    @GroupThreads(1)
    public LookupOutcome lookupLoaded() {
        return lookupOnce();
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @Group("lookupUnderApply")
    @GroupThreads(1)
    public DeltaOutcome applyLoad() {
        return applyOneFrame();
    }
}
