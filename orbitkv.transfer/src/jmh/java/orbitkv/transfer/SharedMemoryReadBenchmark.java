package orbitkv.transfer;

import java.lang.foreign.MemorySegment;
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
 * Shared-memory READ throughput against a memcpy-class copy ({@link MemorySegment#copy}) of the same bytes, in the
 * same run (issue 13). One op moves 16 MiB: {@code sharedMemoryRead} READs 16 MiB / blockBytes granted DRAM
 * blocks through the engine (mapped source arena, chunked copy, CRC32C of every chunk, one copy thread, all
 * READs issued at once); {@code segmentCopy} copies the same arena bytes into the same destinations;
 * {@code segmentCopyAndCrc} adds the checksum the READ must do (the bound any verified READ can reach).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class SharedMemoryReadBenchmark {
    @Param({"65536", "1048576", "16777216"})
    int blockBytes;

    private BenchSource source;
    private MemorySegment[] arenaBlocks;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        source = new BenchSource(blockBytes, BenchSource.blocksPerOp(blockBytes), NativeIo.detect());
        arenaBlocks = new MemorySegment[source.refs.size()];
        for (int i = 0; i < arenaBlocks.length; i++) {
            arenaBlocks[i] = source.arenaBytes(i);
        }
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
        source.close();
    }

    @Benchmark
    public void sharedMemoryRead() {
        source.readAll(BackendPolicy.SHARED_MEMORY_PREFERRED, 64);
    }

    @Benchmark
    public void segmentCopy() {
        for (int i = 0; i < arenaBlocks.length; i++) {
            MemorySegment.copy(arenaBlocks[i], 0, source.destinations[i], 0, blockBytes);
        }
    }

    @Benchmark
    public long segmentCopyAndCrc() {
        return BenchSource.copyAndCrc(arenaBlocks, source.destinations, blockBytes);
    }
}
