package orbitkv.transfer;

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
 * TCP READ throughput against a raw loopback socket copy of the same bytes, measured in the same run (issue 13).
 * One op moves 16 MiB in both benchmarks: {@code tcpRead} READs 16 MiB / blockBytes granted DRAM blocks from a
 * real source (data listener on the native transport, payload sent from the /dev/shm arena) into native
 * destinations, at most 8 READs in flight, each CRC32C-verified; grants are issued and released outside the
 * timed op. {@code rawSocketCopy} streams the same arena bytes over a plain blocking loopback socket pair (one
 * sender thread) into one direct destination, with no framing, no checksum, no request. Ratio of the scores =
 * READ throughput / raw copy throughput; goal ≥ 0.8.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class TcpReadBenchmark {
    @Param({"65536", "1048576", "16777216"})
    int blockBytes;

    @Param({"IO_URING"})
    NativeIo io;

    private BenchSource source;
    private RawLoopback raw;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        source = new BenchSource(blockBytes, BenchSource.blocksPerOp(blockBytes), io);
        raw = new RawLoopback(source.arenaBytes(0), source.destinations[0]);
    }

    @Setup(Level.Invocation)
    public void grant() {
        source.authorizeAll();
    }

    @TearDown(Level.Invocation)
    public void release() {
        source.releaseAll();
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        raw.close();
        source.close();
    }

    /** 16 MiB of granted blocks READ over the TCP data channel, verified. */
    @Benchmark
    public void tcpRead() {
        source.readAll(BackendPolicy.TCP_ONLY, 8);
    }

    /** 16 MiB of the same arena bytes over a raw loopback socket pair. */
    @Benchmark
    public void rawSocketCopy() throws Exception {
        raw.receive(BenchSource.BYTES_PER_OP);
    }
}
