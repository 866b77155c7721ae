package orbitkv.server.tier;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.locks.ReentrantLock;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;

/**
 * The DRAM payload tier (DESIGN §7): one off-heap arena of {@code bytesMax} bytes, a file under a shared
 * memory directory ({@code /dev/shm} by default) mapped with {@link FileChannel#map(FileChannel.MapMode,
 * long, long, Arena)} into a single {@link MemorySegment}, so a same-host transfer backend can map the same
 * file later. The file name carries the pid and a random id and is deleted on {@link #close()}.
 *
 * <p>Allocation: {@link ExtentAllocator} (first fit, 64-byte aligned, coalescing). When a new block does not
 * fit, whole blocks are evicted in LRU order (least recently saved or read first) until a contiguous extent
 * appears; pinned blocks are skipped. If nothing evictable is left the save is refused with
 * {@link TierRefusal#NO_EVICTABLE_SPACE}; a block larger than the arena is refused with
 * {@link TierRefusal#BLOCK_EXCEEDS_TIER}. Every residency change (put, eviction, explicit evict) is
 * reported to the {@link ResidencyListener} under the tier lock (INV-1: the listener never blocks).
 *
 * <p>Concurrency: one lock guards the index, the allocator and pin counts; bytes are copied in and out
 * outside the lock (an extent being filled is reserved and not yet visible; an extent being read is pinned).
 * A replaced or evicted block that is still pinned stays allocated until its last pin closes.
 */
public final class DramTier implements AutoCloseable {
    /** Default directory of the arena file. */
    public static final Path SHARED_MEMORY_DIR = Path.of("/dev/shm");

    private final Path file;
    private final Arena arena;
    private final MemorySegment arenaSegment;
    private final ExtentAllocator allocator;
    private final int pinsMax;
    private final ResidencyListener listener;
    private final ReentrantLock lock = new ReentrantLock();
    /** Access order = LRU order: the eldest entry is evicted first. */
    private final LinkedHashMap<StateKey, Block> index = new LinkedHashMap<>(1024, 0.75f, true);
    private final TierCounters counters = new TierCounters();
    private int pinsHeld;
    private long residentBytes;
    private boolean closed;

    private DramTier(Path file, Arena arena, MemorySegment arenaSegment, int pinsMax, ResidencyListener listener) {
        this.file = file;
        this.arena = arena;
        this.arenaSegment = arenaSegment;
        this.allocator = new ExtentAllocator(arenaSegment.byteSize());
        this.pinsMax = pinsMax;
        this.listener = listener;
    }

    /**
     * Creates and maps the arena file.
     *
     * @param dir directory of the arena file (a tmpfs such as /dev/shm in production; any directory in tests)
     * @param bytesMax arena size, rounded down to 64 bytes, at least 64
     * @param pinsMax bound on concurrently pinned blocks, at least 1
     */
    public static DramTier open(Path dir, long bytesMax, int pinsMax, ResidencyListener listener) throws IOException {
        Objects.requireNonNull(listener, "listener");
        long capacity = bytesMax - bytesMax % ExtentAllocator.ALIGNMENT_BYTES;
        if (capacity < ExtentAllocator.ALIGNMENT_BYTES) {
            throw new IllegalArgumentException("DRAM tier needs at least " + ExtentAllocator.ALIGNMENT_BYTES
                    + " bytes, got " + bytesMax);
        }
        if (pinsMax < 1) {
            throw new IllegalArgumentException("DRAM pins max must be >= 1, got " + pinsMax);
        }
        Path file = dir.resolve("orbitkv-dram-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID() + ".arena");
        Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            // The mapping stays valid after the channel closes; it lives until the arena closes.
            MemorySegment segment = channel.map(FileChannel.MapMode.READ_WRITE, 0, capacity, arena);
            return new DramTier(file, arena, segment, pinsMax, listener);
        } catch (IOException | RuntimeException e) {
            arena.close();
            Files.deleteIfExists(file);
            throw e;
        }
    }

    /** Stores a copy of {@code payload} as the new DRAM residence of {@code key} (replacing an older one). */
    public SaveOutcome put(StateKey key, byte[] payload) {
        return put(key, MemorySegment.ofArray(payload));
    }

    /** Stores a copy of {@code payload} (any segment: heap, direct buffer, another arena). */
    public SaveOutcome put(StateKey key, MemorySegment payload) {
        long size = payload.byteSize();
        long extent = ExtentAllocator.extentBytes(size);
        if (extent > allocator.capacityBytes()) {
            counters.refused(TierRefusal.BLOCK_EXCEEDS_TIER);
            return new SaveOutcome.Refused(TierRefusal.BLOCK_EXCEEDS_TIER, "block of " + size
                    + " bytes exceeds the DRAM tier of " + allocator.capacityBytes() + " bytes");
        }
        long offset;
        lock.lock();
        try {
            if (closed) {
                return refuse(TierRefusal.CLOSED, "DRAM tier is closed");
            }
            offset = allocateEvicting(extent);
            if (offset < 0) {
                return refuse(TierRefusal.NO_EVICTABLE_SPACE, "no evictable space for a block of " + size
                        + " bytes: " + pinsHeld + " pins held, " + allocator.freeBytes() + " bytes free in "
                        + allocator.freeExtentCount() + " extents");
            }
        } finally {
            lock.unlock();
        }
        // Reserved and invisible: nobody else reads or frees this extent while we copy.
        MemorySegment.copy(payload, 0, arenaSegment, offset, size);
        lock.lock();
        try {
            if (closed) {
                return refuse(TierRefusal.CLOSED, "DRAM tier closed during the save");
            }
            Block block = new Block(key, offset, extent, size);
            Block old = index.put(key, block);
            if (old != null) {
                // A put replaces the older residence (its journal record supersedes it): no delete record.
                residentBytes -= old.size;
                retire(old);
            }
            residentBytes += size;
            block.sequence = listener.onResident(key, Medium.DRAM, size);
            counters.stored();
            return new SaveOutcome.Stored(Medium.DRAM, block.sequence, size);
        } finally {
            lock.unlock();
        }
    }

    /** Pins the block of {@code key} for reading (a read counts as a use for LRU). */
    public PinOutcome pin(StateKey key) {
        lock.lock();
        try {
            if (closed) {
                return new PinOutcome.Refused(TierRefusal.CLOSED, "DRAM tier is closed");
            }
            Block block = index.get(key);
            if (block == null) {
                return new PinOutcome.NotResident();
            }
            if (pinsHeld >= pinsMax) {
                counters.refused(TierRefusal.PINS_EXHAUSTED);
                return new PinOutcome.Refused(TierRefusal.PINS_EXHAUSTED,
                        "all " + pinsMax + " DRAM pins are held");
            }
            block.pins++;
            pinsHeld++;
            counters.read();
            return new PinOutcome.Pinned(new Pin(block));
        } finally {
            lock.unlock();
        }
    }

    /** Removes the DRAM residence of {@code key} (explicit evict); true if it was resident. */
    public boolean evict(StateKey key) {
        lock.lock();
        try {
            Block block = index.remove(key);
            if (block == null) {
                return false;
            }
            dropResidence(block);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** The residence of {@code key} in this tier (sequence and size), without pinning; counts as a use for LRU. */
    public java.util.Optional<Residence> residence(StateKey key) {
        lock.lock();
        try {
            Block b = index.get(key);
            return b == null ? java.util.Optional.empty() : java.util.Optional.of(new Residence(Medium.DRAM, b.sequence, b.size));
        } finally {
            lock.unlock();
        }
    }

    public boolean contains(StateKey key) {
        lock.lock();
        try {
            return index.containsKey(key);
        } finally {
            lock.unlock();
        }
    }

    /** Point-in-time figures for /metrics and /cache/metadata/status. */
    public TierUsage usage() {
        lock.lock();
        try {
            return new TierUsage(Medium.DRAM, index.size(), residentBytes, allocator.capacityBytes(),
                    allocator.capacityBytes() - allocator.freeBytes(), pinsHeld, pinsMax);
        } finally {
            lock.unlock();
        }
    }

    public TierCounters counters() {
        return counters;
    }

    /** The arena file (for a same-host transfer backend to map). */
    public Path arenaFile() {
        return file;
    }

    /** Fragmentation figures for tests: (free extents, largest free extent bytes). */
    long[] fragmentation() {
        lock.lock();
        try {
            return new long[] {allocator.freeExtentCount(), allocator.largestFreeExtentBytes()};
        } finally {
            lock.unlock();
        }
    }

    /** Unmaps the arena and deletes its file. Readers racing with close get {@link IllegalStateException}. */
    @Override
    public void close() throws IOException {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
        } finally {
            lock.unlock();
        }
        arena.close();
        Files.deleteIfExists(file);
    }

    private long allocateEvicting(long extent) {
        long offset = allocator.allocate(extent);
        while (offset < 0) {
            Block victim = eldestUnpinned();
            if (victim == null) {
                return -1;
            }
            index.remove(victim.key);
            dropResidence(victim);
            counters.evicted();
            offset = allocator.allocate(extent);
        }
        return offset;
    }

    /** The LRU-eldest unpinned block; skips at most {@code pinsMax} pinned ones. */
    private Block eldestUnpinned() {
        Iterator<Block> it = index.values().iterator();
        while (it.hasNext()) {
            Block b = it.next();
            if (b.pins == 0) {
                return b;
            }
        }
        return null;
    }

    /** The block left the index: report the delete and retire it. */
    private void dropResidence(Block block) {
        residentBytes -= block.size;
        listener.onEvicted(block.key, Medium.DRAM);
        retire(block);
    }

    /** The block is no longer in the index: free its extent now, or when its last pin closes. */
    private void retire(Block block) {
        block.retired = true;
        if (block.pins == 0) {
            allocator.free(block.offset, block.extent);
        }
    }

    private SaveOutcome refuse(TierRefusal reason, String message) {
        counters.refused(reason);
        return new SaveOutcome.Refused(reason, message);
    }

    private void unpin(Block block) {
        lock.lock();
        try {
            block.pins--;
            pinsHeld--;
            if (block.retired && block.pins == 0 && !closed) {
                allocator.free(block.offset, block.extent);
            }
        } finally {
            lock.unlock();
        }
    }

    private static final class Block {
        final StateKey key;
        final long offset;
        final long extent;
        final long size;
        long sequence;
        int pins;
        boolean retired;

        Block(StateKey key, long offset, long extent, long size) {
            this.key = key;
            this.offset = offset;
            this.extent = extent;
            this.size = size;
        }
    }

    private final class Pin extends TierPin {
        private final Block block;

        Pin(Block block) {
            super(block.key, Medium.DRAM, block.size);
            this.block = block;
        }

        @Override
        public long sequence() {
            return block.sequence;
        }

        @Override
        void copyBytes(ByteBuffer view) {
            MemorySegment.copy(arenaSegment, block.offset, MemorySegment.ofBuffer(view), 0, block.size);
        }

        @Override
        void release() {
            unpin(block);
        }
    }
}
