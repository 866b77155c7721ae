package orbitkv.server.tier;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.transfer.PayloadSource;
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
 * DRAM tier hot paths: a save that replaces a resident block (allocate, copy in, index, listener) with the
 * tier full so every save also evicts, and a restore read (pin, copy out, unpin). Arena in /dev/shm.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class DramTierBenchmark {
    @Param({"16384", "262144"})
    int blockBytes;

    private static final int RESIDENT_BLOCKS = 256;
    private DramTier tier;
    private StateKey[] keys;
    private byte[] payload;
    private ByteBuffer readBuffer;
    private int next;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        Path dir = Files.isDirectory(DramTier.SHARED_MEMORY_DIR) ? DramTier.SHARED_MEMORY_DIR : Files.createTempDirectory("bench");
        tier = DramTier.open(dir, (long) blockBytes * RESIDENT_BLOCKS, 64, new ResidencySequence());
        keys = new StateKey[RESIDENT_BLOCKS * 2];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = new StateKey(Namespace.utf8("bench"), new byte[] {(byte) (i >>> 8), (byte) i, 7, 7});
        }
        payload = new byte[blockBytes];
        readBuffer = ByteBuffer.allocateDirect(blockBytes);
        for (int i = 0; i < RESIDENT_BLOCKS; i++) {
            tier.put(keys[i], payload);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        tier.close();
    }

    /** Saves a new key into a full tier: one LRU eviction per save. */
    @Benchmark
    public Object saveEvicting() {
        next = (next + 1) % keys.length;
        return tier.put(keys[next], payload);
    }

    /** Reads the residence, pins that exact generation, copies it out to a direct buffer (CRC32C verified), unpins. */
    @Benchmark
    public long restoreRead() {
        next = (next + 1) % RESIDENT_BLOCKS;
        StateKey key = keys[next];
        long sequence = tier.residence(key).map(r -> r.sequence()).orElse(-1L);
        if (sequence > 0 && tier.pin(key, sequence) instanceof PayloadSource.PinResult.Pinned block) {
            try (block) {
                readBuffer.clear();
                block.copyTo(readBuffer);
                return block.residencySequence();
            }
        }
        return -1;
    }
}
