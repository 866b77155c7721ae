package orbitkv.server.tier;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.LongAdder;

/**
 * The memory that restore records are copied or READ into (issue 24 item 2): one mapping of
 * {@code --restore-bytes-in-flight-max} bytes of an unlinked tmpfs file in the DRAM directory, carved into extents
 * by an {@link ExtentAllocator} and reused from one restore to the next.
 *
 * <p>Why not a fresh direct buffer per record: Netty's allocator does not pool buffers of a megabyte and more, so
 * every such record was a new {@code ByteBuffer.allocateDirect}, zero-filled byte by byte and then page-faulted
 * in (7 % of a peer restore's CPU in a 16 x 4 MiB profile), only to be overwritten by the READ. Here the kernel
 * zero-fills each page once, on its first use; later restores reuse it as it is. The pages live in tmpfs like the
 * DRAM arena's, so they are not direct memory; the file is unlinked as soon as it is mapped, so a crash leaves
 * nothing behind.
 *
 * <p>Bound and owner: the {@link CopyOutBudget} of the same size admits every record's bytes before it asks here,
 * so the extents held never exceed the mapping; an allocation can still fail when the free space is fragmented,
 * and then the caller uses a direct buffer (counted: {@link #fallbacksTotal()}), still within the budget. Each
 * extent is freed exactly once, by the record that holds it. Thread-safe.
 */
public final class RestoreArena implements AutoCloseable {
    private final Arena arena;
    private final MemorySegment memory;
    private final ExtentAllocator extents;
    private final LongAdder fallbacks = new LongAdder();
    private long highWaterBytes;
    private boolean closed;

    /** One extent of the arena, {@link #segment()} sized to the bytes asked for. */
    public record Extent(long offset, long extentBytes, MemorySegment segment) {}

    private RestoreArena(Arena arena, MemorySegment memory) {
        this.arena = arena;
        this.memory = memory;
        this.extents = new ExtentAllocator(memory.byteSize());
    }

    /**
     * Maps {@code bytesMax} (rounded up to the extent alignment) of an unlinked file created in {@code dir}.
     *
     * @throws IOException if the file cannot be created or mapped
     */
    public static RestoreArena map(Path dir, long bytesMax) throws IOException {
        if (bytesMax < 1) {
            throw new IllegalArgumentException("restore arena must be >= 1 byte, got " + bytesMax);
        }
        long capacity = ExtentAllocator.extentBytes(bytesMax);
        OwnerOnlyFiles.createDirectories(dir);
        Path file = Files.createTempFile(dir, "orbitkv-restore-", ".arena", OwnerOnlyFiles.fileMode()); // 0600 (issue 33)
        Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            return new RestoreArena(arena, channel.map(FileChannel.MapMode.READ_WRITE, 0, capacity, arena));
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        } finally {
            Files.deleteIfExists(file); // the mapping keeps the pages; no name is left to reclaim
        }
    }

    /** An extent of at least {@code bytes}, or null (counted) when no free extent is large enough or closed. */
    public synchronized Extent allocate(long bytes) {
        long length = ExtentAllocator.extentBytes(bytes);
        long offset = closed ? -1 : extents.allocate(length);
        if (offset < 0) {
            fallbacks.increment();
            return null;
        }
        highWaterBytes = Math.max(highWaterBytes, extents.capacityBytes() - extents.freeBytes());
        return new Extent(offset, length, memory.asSlice(offset, bytes));
    }

    /** Frees an extent of this arena (once; a second free throws). */
    public synchronized void free(Extent e) {
        if (!closed) {
            extents.free(e.offset(), e.extentBytes());
        }
    }

    public long capacityBytes() {
        return extents.capacityBytes();
    }

    public synchronized long heldBytes() {
        return extents.capacityBytes() - extents.freeBytes();
    }

    /** The most bytes held at once: what the mapping's pages cost at most (each is touched on first use). */
    public synchronized long highWaterBytes() {
        return highWaterBytes;
    }

    /** Allocations this arena could not serve (fragmented or closed); the caller used a direct buffer instead. */
    public long fallbacksTotal() {
        return fallbacks.sum();
    }

    /** Unmaps the memory: only after every response that could hold an extent was written or dropped. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            arena.close();
        }
    }
}
