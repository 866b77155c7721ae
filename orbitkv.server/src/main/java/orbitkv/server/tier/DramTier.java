package orbitkv.server.tier;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.zip.CRC32C;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;
import orbitkv.transfer.PayloadSource;
import orbitkv.transfer.PayloadSource.PayloadLocation;
import orbitkv.transfer.PayloadSource.PinResult;

/**
 * The DRAM payload tier (DESIGN §7): one off-heap arena of {@code bytesMax} bytes, a file under a shared
 * memory directory ({@code /dev/shm} by default) mapped into a single {@link MemorySegment}, so a same-host
 * transfer backend can map the same file.
 *
 * <p>The arena file is {@code orbitkv-dram-<node>-<instance>.arena}, locked by this process for its life
 * ({@link OwnerLock}). At open, every {@code orbitkv-dram-*.arena} in the directory whose lock is free (its
 * Manager died, e.g. kill -9) is deleted: a stale arena is reclaimed, never leaked, and a live Manager's
 * arena is never touched. The file is deleted on {@link #close()}.
 *
 * <p>Saves are reservations (issue 20 items 3, 4): {@link #reserve} takes an extent as soon as a record's
 * length is known, evicting whole residences in LRU order (pinned ones skipped and counted) until a contiguous
 * extent appears; {@link #write} fills it outside the lock; {@link #commit} makes all of a batch's residences
 * visible in one lock hold, each reported to the {@link ResidencyListener}; {@link #abort} frees it. A
 * reservation counts against the tier ({@code allocatedBytes}) and is invisible to reads and eviction until
 * committed. Refusals: {@link TierRefusal#BLOCK_EXCEEDS_TIER}, {@link TierRefusal#NO_EVICTABLE_SPACE},
 * {@link TierRefusal#CLOSED}.
 *
 * <p>Reads pin one exact residence generation ({@link PayloadSource}); copies are verified against the
 * CRC32C computed while the bytes were written. Bookkeeping is the shared {@link ResidenceTable}.
 */
public final class DramTier implements AutoCloseable {
    /** Default directory of the arena file. */
    public static final Path SHARED_MEMORY_DIR = Path.of("/dev/shm");
    static final String ARENA_PREFIX = "orbitkv-dram-";
    static final String ARENA_SUFFIX = ".arena";

    /** Where a residence's bytes are in the arena. */
    record Extent(long offset, long length) {}

    private final OwnerLock arenaLock;
    private final Arena arena;
    private final MemorySegment arenaSegment;
    private final ExtentAllocator allocator;
    private final ResidenceTable<Extent> table;
    private final TierFaults faults = new TierFaults(Medium.DRAM);
    private long reservedBytes;

    private DramTier(OwnerLock arenaLock, Arena arena, MemorySegment arenaSegment, int pinsMax, long pinnedBytesMax,
                     ResidencyListener listener) {
        this.arenaLock = arenaLock;
        this.arena = arena;
        this.arenaSegment = arenaSegment;
        this.allocator = new ExtentAllocator(arenaSegment.byteSize());
        this.table = new ResidenceTable<>(Medium.DRAM, listener, pinsMax, pinnedBytesMax,
                e -> allocator.free(e.offset(), e.length()));
    }

    /** For tests and benchmarks: a fresh instance, pinned bytes bounded by the arena size. */
    public static DramTier open(Path dir, long bytesMax, int pinsMax, ResidencyListener listener) throws IOException {
        return open(dir, TierInstance.random("test"), bytesMax, pinsMax, Math.max(1, bytesMax), listener);
    }

    /**
     * Reclaims stale arena files in {@code dir}, then creates, locks and maps this instance's arena.
     *
     * @param dir directory of the arena file (a tmpfs such as /dev/shm in production; any directory in tests)
     * @param bytesMax arena size, rounded down to 64 bytes, at least 64
     * @param pinsMax bound on concurrently pinned blocks (readers), at least 1
     * @param pinnedBytesMax bound on pinned payload bytes (readers), at least 1
     */
    public static DramTier open(Path dir, TierInstance instance, long bytesMax, int pinsMax, long pinnedBytesMax,
                                ResidencyListener listener) throws IOException {
        Objects.requireNonNull(listener, "listener");
        long capacity = bytesMax - bytesMax % ExtentAllocator.ALIGNMENT_BYTES;
        if (capacity < ExtentAllocator.ALIGNMENT_BYTES) {
            throw new IllegalArgumentException("DRAM tier needs at least " + ExtentAllocator.ALIGNMENT_BYTES
                    + " bytes, got " + bytesMax);
        }
        if (pinsMax < 1 || pinnedBytesMax < 1) {
            throw new IllegalArgumentException("DRAM pins max and pinned bytes max must be >= 1, got " + pinsMax
                    + ", " + pinnedBytesMax);
        }
        OwnerOnlyFiles.createDirectories(dir);
        reclaimStaleArenas(dir);
        Path file = dir.resolve(ARENA_PREFIX + instance.fileTag() + ARENA_SUFFIX);
        Path creating = dir.resolve(ARENA_PREFIX + instance.fileTag() + ".creating");
        Arena arena = Arena.ofShared();
        FileChannel channel = null;
        OwnerLock lock = null;
        try {
            channel = FileChannel.open(creating, java.util.Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE), OwnerOnlyFiles.fileMode()); // 0600 at creation (issue 33 item 3)
            // Locked before it has the name other starters probe, so no starter ever takes it for stale.
            lock = OwnerLock.adopt(creating, channel);
            MemorySegment segment = channel.map(FileChannel.MapMode.READ_WRITE, 0, capacity, arena);
            Files.move(creating, file, StandardCopyOption.ATOMIC_MOVE);
            lock = lock.renamed(file);
            return new DramTier(lock, arena, segment, pinsMax, pinnedBytesMax, listener);
        } catch (IOException | RuntimeException e) {
            arena.close();
            if (lock != null) {
                lock.close();
            } else if (channel != null) {
                channel.close();
            }
            Files.deleteIfExists(creating);
            Files.deleteIfExists(file);
            throw e;
        }
    }

    /** Deletes every arena file in {@code dir} whose owner is gone; returns how many. */
    static int reclaimStaleArenas(Path dir) throws IOException {
        int reclaimed = 0;
        try (DirectoryStream<Path> arenas = Files.newDirectoryStream(dir, ARENA_PREFIX + "*" + ARENA_SUFFIX)) {
            for (Path p : arenas) {
                if (OwnerLock.deleteIfOwnerGone(p)) {
                    reclaimed++;
                }
            }
        }
        return reclaimed;
    }

    // ------------------------------------------------------------------ saves: reserve, write, commit, abort

    /** An extent reserved for one record of a save; filled by {@link #write}, then committed or aborted. */
    static final class Reservation {
        final StateKey key;
        final long sizeBytes;
        final Extent extent;
        final CRC32C crc = new CRC32C();
        long filled;
        boolean done;

        Reservation(StateKey key, long sizeBytes, Extent extent) {
            this.key = key;
            this.sizeBytes = sizeBytes;
            this.extent = extent;
        }

        boolean full() {
            return filled == sizeBytes;
        }
    }

    /** The outcome of {@link #reserve}: an extent, or a refusal (nothing reserved). */
    sealed interface Reserve {
        record Reserved(Reservation reservation) implements Reserve {}

        record Refused(SaveOutcome.Refused refusal) implements Reserve {}
    }

    /** Reserves an extent for a record of {@code sizeBytes}, evicting LRU residences as needed. */
    Reserve reserve(StateKey key, long sizeBytes) {
        long extentBytes = ExtentAllocator.extentBytes(sizeBytes);
        if (extentBytes > allocator.capacityBytes()) {
            return refuse(TierRefusal.BLOCK_EXCEEDS_TIER, "block of " + sizeBytes
                    + " bytes exceeds the DRAM tier of " + allocator.capacityBytes() + " bytes");
        }
        table.lock.lock();
        try {
            if (table.closed()) {
                return refuse(TierRefusal.CLOSED, "DRAM tier is closed");
            }
            long offset = allocator.allocate(extentBytes);
            while (offset < 0 && table.evictEldestUnpinned()) {
                offset = allocator.allocate(extentBytes);
            }
            if (offset < 0) {
                return refuse(TierRefusal.NO_EVICTABLE_SPACE, "no evictable space for a block of " + sizeBytes
                        + " bytes: " + allocator.freeBytes() + " bytes free in " + allocator.freeExtentCount()
                        + " extents, " + reservedBytes + " bytes reserved by saves in progress, the rest pinned");
            }
            reservedBytes += extentBytes;
            return new Reserve.Reserved(new Reservation(key, sizeBytes, new Extent(offset, extentBytes)));
        } finally {
            table.lock.unlock();
        }
    }

    /**
     * Copies {@code src} (its remaining bytes, at most what the reservation still lacks) into the reserved
     * extent and advances both. No lock: a reserved extent is owned by its save alone.
     *
     * @throws IllegalStateException if the reservation is already complete, or the tier closed meanwhile
     * @throws TierWriteFailed if the arena's filesystem could not back the bytes ({@link TierRefusal#BACKING_STORE_FULL})
     */
    void write(Reservation r, ByteBuffer src) {
        long room = r.sizeBytes - r.filled;
        if (r.done || src.remaining() > room) {
            throw new IllegalStateException("write of " + src.remaining() + " bytes into a reservation of "
                    + r.key.keyHex() + " with " + room + " bytes left");
        }
        int n = src.remaining();
        try {
            MemorySegment.copy(MemorySegment.ofBuffer(src), 0, arenaSegment, r.extent.offset() + r.filled, n);
        } catch (InternalError pageNotBacked) {
            // SIGBUS turned into an error by the JVM: the filesystem under the arena (a tmpfs, shared with others)
            // could not back a page of this extent. The save is refused by name; the caller aborts the reservation.
            String message = "the filesystem of " + arenaLock.file().getParent() + " could not back " + n
                    + " bytes written at arena offset " + (r.extent.offset() + r.filled) + " (" + pageNotBacked.getMessage()
                    + "; usable now: " + TierSpace.mib(TierSpace.usableBytes(arenaLock.file().getParent())) + ")";
            table.counters().refused(TierRefusal.BACKING_STORE_FULL);
            faults.fault(TierRefusal.BACKING_STORE_FULL, message);
            throw new TierWriteFailed(new SaveOutcome.Refused(TierRefusal.BACKING_STORE_FULL, message), pageNotBacked);
        }
        faults.writeSucceeded();
        r.crc.update(src); // consumes src; the chunk was just copied, so this pass reads it from cache, not memory
        r.filled += n;
        table.counters().payloadSavedIn(n);
    }

    /**
     * Makes every reservation of a batch a residence in one lock hold (each a listener put, in order).
     *
     * @throws IllegalStateException if a reservation is not completely filled
     * @return the stored outcomes in order, or one {@link SaveOutcome.Refused} (CLOSED) with nothing stored
     */
    List<SaveOutcome> commit(List<Reservation> batch) {
        for (Reservation r : batch) {
            if (!r.full() || r.done) {
                throw new IllegalStateException("commit of an incomplete reservation of " + r.key.keyHex()
                        + ": " + r.filled + "/" + r.sizeBytes + " bytes");
            }
        }
        table.lock.lock();
        try {
            if (table.closed()) {
                return List.of(refuse(TierRefusal.CLOSED, "DRAM tier closed during the save").refusal());
            }
            List<SaveOutcome> out = new ArrayList<>(batch.size());
            for (Reservation r : batch) {
                r.done = true;
                reservedBytes -= r.extent.length();
                assert reservedBytes >= 0 : "DRAM reserved bytes " + reservedBytes;
                ResidenceTable.Entry<Extent> e = table.install(
                        new ResidenceTable.Entry<>(r.key, r.sizeBytes, (int) r.crc.getValue(), r.extent));
                out.add(new SaveOutcome.Stored(Medium.DRAM, e.sequence, r.sizeBytes));
            }
            return out;
        } finally {
            table.lock.unlock();
        }
    }

    /** Frees a reservation that will not be committed (idempotent). */
    void abort(Reservation r) {
        table.lock.lock();
        try {
            if (r.done) {
                return;
            }
            r.done = true;
            reservedBytes -= r.extent.length();
            assert reservedBytes >= 0 : "DRAM reserved bytes " + reservedBytes;
            table.counters().reservationAborted();
            if (!table.closed()) {
                allocator.free(r.extent.offset(), r.extent.length());
            }
        } finally {
            table.lock.unlock();
        }
    }

    /** Stores a copy of {@code payload} as the new DRAM residence of {@code key}: a batch of one. */
    public SaveOutcome put(StateKey key, byte[] payload) {
        return put(key, MemorySegment.ofArray(payload));
    }

    /** Stores a copy of {@code payload} (any segment: heap, direct buffer, another arena): a batch of one. */
    public SaveOutcome put(StateKey key, MemorySegment payload) {
        Reserve res = reserve(key, payload.byteSize());
        if (res instanceof Reserve.Refused(SaveOutcome.Refused refused)) {
            return refused;
        }
        Reservation r = ((Reserve.Reserved) res).reservation();
        try {
            write(r, payload.asByteBuffer());
        } catch (IllegalStateException closing) {
            abort(r);
            return refuse(TierRefusal.CLOSED, "DRAM tier closed during the save").refusal();
        } catch (TierWriteFailed failed) {
            abort(r);
            return failed.refusal();
        }
        return commit(List.of(r)).getFirst();
    }

    // ------------------------------------------------------------------ reads, evicts, figures

    /** Pins the DRAM residence of {@code key} iff its sequence is exactly {@code sequence} (a reader pin). */
    public PinResult pin(StateKey key, long sequence) {
        return table.pin(key, sequence, true, e -> new Pin(e, true));
    }

    /** A write-through pin for the SSD writer: not charged to the reader pin ledger (the SSD queue bounds it). */
    PinResult pinForWriteThrough(StateKey key, long sequence) {
        return table.pin(key, sequence, false, e -> new Pin(e, false));
    }

    /** Re-announces every DRAM residence under a fresh sequence of the current listener (a heal); returns how many. */
    int republish() {
        return table.republish();
    }

    /** Removes the DRAM residence of {@code key} (explicit evict); true if it was resident. */
    public boolean evict(StateKey key) {
        return table.evict(key);
    }

    /** The residence of {@code key} in this tier, without pinning; counts as a use for LRU. */
    public Optional<Residence> residence(StateKey key) {
        return table.residence(key);
    }

    public boolean contains(StateKey key) {
        return table.contains(key);
    }

    /** Point-in-time figures for /metrics and /health. */
    public TierUsage usage() {
        table.lock.lock();
        try {
            return table.usage(allocator.capacityBytes(), allocator.capacityBytes() - allocator.freeBytes(), reservedBytes);
        } finally {
            table.lock.unlock();
        }
    }

    public TierCounters counters() {
        return table.counters();
    }

    /** Write faults of the arena's filesystem (issue 33): counted, logged per interval, reported in /health. */
    public TierFaults faults() {
        return faults;
    }

    /** The arena file (for a same-host transfer backend to map). */
    public Path arenaFile() {
        return arenaLock.file();
    }

    /** Fragmentation figures for tests: (free extents, largest free extent bytes). */
    long[] fragmentation() {
        table.lock.lock();
        try {
            return new long[] {allocator.freeExtentCount(), allocator.largestFreeExtentBytes()};
        } finally {
            table.lock.unlock();
        }
    }

    /** Unmaps the arena, deletes its file and releases its lock. Readers racing with close get {@link IllegalStateException}. */
    @Override
    public void close() throws IOException {
        if (!table.close()) {
            return;
        }
        arena.close();
        try {
            Files.deleteIfExists(arenaLock.file());
        } finally {
            arenaLock.close();
        }
    }

    private Reserve.Refused refuse(TierRefusal reason, String message) {
        table.counters().refused(reason);
        return new Reserve.Refused(new SaveOutcome.Refused(reason, message));
    }

    /** A pin of a DRAM residence: its bytes are a read-only slice of the arena. */
    private final class Pin extends TierPin<Extent> {
        Pin(ResidenceTable.Entry<Extent> entry, boolean charged) {
            super(DramTier.this.table, entry, charged);
        }

        @Override
        public PayloadLocation location() {
            return new PayloadLocation.InArena(arenaLock.file(), entry.storage.offset(),
                    arenaSegment.asSlice(entry.storage.offset(), entry.sizeBytes).asReadOnly());
        }

        @Override
        Broken copyBytes(ByteBuffer view) {
            MemorySegment.copy(arenaSegment, entry.storage.offset(), MemorySegment.ofBuffer(view), 0, entry.sizeBytes);
            return null;
        }
    }
}
