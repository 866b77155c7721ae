package orbitkv.transfer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.zip.CRC32C;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;

/**
 * A {@link PayloadSource} over real storage for the transfer tests: a DRAM arena that is a file under
 * {@code /dev/shm} (or a temp directory) mapped with {@link FileChannel#map} into a shared {@link Arena}, and SSD
 * residences as real files. Residency sequences come from one counter, as the journal's do. Extents are never
 * reused (a bump allocator), so an evicted but pinned residence stays byte-for-byte valid, as the contract
 * demands; an SSD file is deleted only when its last pin is released.
 */
public final class TestPayloadSource implements PayloadSource, AutoCloseable {
    private final Path arenaFile;
    private final Arena arena;
    private final MemorySegment segment;
    private final Path ssdDir;
    private final int pinsMax;
    private final Map<Residence, Resident> resident = new HashMap<>();
    private long nextOffset;
    private long sequence;
    private int pinsHeld;
    private boolean closed;

    private record Residence(StateKey key, Medium medium) {}

    private final class Resident {
        final long sequence;
        final long offset; // DRAM
        final Path file; // SSD
        final long size;
        final int crc;
        int pins;
        boolean evicted;

        Resident(long sequence, long offset, Path file, long size, int crc) {
            this.sequence = sequence;
            this.offset = offset;
            this.file = file;
            this.size = size;
            this.crc = crc;
        }
    }

    public TestPayloadSource(Path arenaDir, long arenaBytes, Path ssdDir, int pinsMax) throws IOException {
        this.arenaFile = arenaDir.resolve("orbitkv-test-" + UUID.randomUUID() + ".arena");
        this.ssdDir = ssdDir;
        this.pinsMax = pinsMax;
        this.arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(arenaFile, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            this.segment = ch.map(FileChannel.MapMode.READ_WRITE, 0, arenaBytes, arena);
        }
    }

    /** /dev/shm when it exists (as the DRAM tier uses), else {@code fallback}. */
    public static Path sharedMemoryDir(Path fallback) {
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm : fallback;
    }

    public Path arenaFile() {
        return arenaFile;
    }

    /** Saves {@code payload} as the new DRAM residence of {@code key}; returns its residency sequence. */
    public synchronized long putDram(StateKey key, byte[] payload) {
        long offset = nextOffset;
        if (offset + payload.length > segment.byteSize()) {
            throw new IllegalStateException("test arena full");
        }
        MemorySegment.copy(MemorySegment.ofArray(payload), 0, segment, offset, payload.length);
        nextOffset = (offset + payload.length + 63) & ~63L;
        return replace(new Residence(key, Medium.DRAM), new Resident(++sequence, offset, null, payload.length, crc(payload)));
    }

    /** Saves {@code payload} as the new SSD residence (a real file); returns its residency sequence. */
    public synchronized long putSsd(StateKey key, byte[] payload) {
        Path file = ssdDir.resolve("block-" + UUID.randomUUID());
        try {
            Files.write(file, payload, StandardOpenOption.CREATE_NEW);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return replace(new Residence(key, Medium.SSD), new Resident(++sequence, -1, file, payload.length, crc(payload)));
    }

    private long replace(Residence r, Resident next) {
        Resident old = resident.put(r, next);
        if (old != null) {
            evicted(old);
        }
        return next.sequence;
    }

    /** Evicts a residence: it leaves the resident map at once; pinned bytes stay valid until unpinned. */
    public synchronized boolean evict(StateKey key, Medium medium) {
        Resident old = resident.remove(new Residence(key, medium));
        if (old != null) {
            evicted(old);
        }
        return old != null;
    }

    private void evicted(Resident r) {
        r.evicted = true;
        if (r.pins == 0) {
            deleteFile(r);
        }
    }

    private static void deleteFile(Resident r) {
        if (r.file != null) {
            try {
                Files.deleteIfExists(r.file);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    public synchronized int pinsHeld() {
        return pinsHeld;
    }

    @Override
    public synchronized PinResult pin(StateKey key, Medium medium, long residencySequence) {
        if (closed) {
            return new PinResult.Closed();
        }
        Resident r = resident.get(new Residence(key, medium));
        if (r == null) {
            return new PinResult.NotResident();
        }
        if (r.sequence != residencySequence) {
            return new PinResult.StaleGeneration(r.sequence);
        }
        if (pinsHeld >= pinsMax) {
            return new PinResult.PinLimit(pinsMax, Long.MAX_VALUE);
        }
        r.pins++;
        pinsHeld++;
        return new TestPin(key, medium, r);
    }

    private final class TestPin implements PinResult.Pinned {
        private final StateKey key;
        private final Medium medium;
        private final Resident r;
        private boolean released;

        TestPin(StateKey key, Medium medium, Resident r) {
            this.key = key;
            this.medium = medium;
            this.r = r;
        }

        @Override
        public StateKey key() {
            return key;
        }

        @Override
        public Medium medium() {
            return medium;
        }

        @Override
        public long residencySequence() {
            return r.sequence;
        }

        @Override
        public long sizeBytes() {
            return r.size;
        }

        @Override
        public int crc32c() {
            return r.crc;
        }

        @Override
        public PayloadLocation location() {
            return r.file != null ? new PayloadLocation.InFile(r.file, 0, r.size)
                    : new PayloadLocation.InArena(arenaFile, r.offset, segment.asSlice(r.offset, r.size).asReadOnly());
        }

        @Override
        public CopyOutcome copyTo(ByteBuffer dst) {
            synchronized (TestPayloadSource.this) {
                if (released) {
                    throw new IllegalStateException("released");
                }
            }
            int start = dst.position();
            if (r.file != null) {
                try (FileChannel ch = FileChannel.open(r.file, StandardOpenOption.READ)) {
                    ByteBuffer d = dst.duplicate().limit(start + (int) r.size);
                    while (d.hasRemaining() && ch.read(d) >= 0) {
                        // read to the end
                    }
                } catch (IOException e) {
                    return new CopyOutcome.Corrupt("io-error", e.toString());
                }
            } else {
                MemorySegment.copy(segment, r.offset, MemorySegment.ofBuffer(dst), 0, r.size);
            }
            CRC32C c = new CRC32C();
            c.update(dst.duplicate().limit(start + (int) r.size));
            dst.position(start + (int) r.size);
            return (int) c.getValue() == r.crc ? new CopyOutcome.Copied(r.size)
                    : new CopyOutcome.Corrupt("checksum-mismatch", "crc differs");
        }

        @Override
        public void release() {
            synchronized (TestPayloadSource.this) {
                if (released) {
                    return;
                }
                released = true;
                r.pins--;
                pinsHeld--;
                if (r.evicted && r.pins == 0) {
                    deleteFile(r);
                }
            }
        }
    }

    private static int crc(byte[] payload) {
        CRC32C c = new CRC32C();
        c.update(payload);
        return (int) c.getValue();
    }

    @Override
    public void close() throws IOException {
        synchronized (this) {
            closed = true;
            for (Resident r : resident.values()) {
                deleteFile(r);
            }
            resident.clear();
        }
        arena.close();
        Files.deleteIfExists(arenaFile);
    }
}
