package orbitkv.transfer;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * READ latency of one 64 KiB DRAM block (issue 13): admission to verified completion, one READ at a time, over
 * TCP (pooled connection, so no connect in the path) and over shared memory. JMH SampleTime reports p50/p99.
 * Grants of 128 blocks are issued outside the timed op when the previous one is used up.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ReadLatencyBenchmark {
    @Param({"TCP_ONLY", "SHARED_MEMORY_PREFERRED"})
    BackendPolicy policy;

    private BenchSource source;
    private Grant grant;
    private int next = 128;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        source = new BenchSource(64 << 10, 128, NativeIo.detect());
    }

    @Setup(Level.Invocation)
    public void grantIfUsedUp() {
        if (next == 128) {
            if (grant != null) {
                TransferFixture.await(source.f.engine.release(grant));
            }
            grant = source.f.grant(source.refs);
            next = 0;
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        source.close();
    }

    @Benchmark
    public ReadResult read64KiB() {
        int i = next++;
        ReadResult o = source.f.engine.read(grant, i, Destination.of(source.destinations[i]), policy,
                Duration.ofSeconds(10)).outcome().toCompletableFuture().join();
        BenchSource.check(o);
        return o;
    }
}
