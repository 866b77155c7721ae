package orbitkv.server.tier;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;

/**
 * The SSD payload tier (DESIGN §7): one file per block under a directory, bounded by {@code bytesMax},
 * written by one asynchronous writer thread from a queue bounded in count and bytes.
 *
 * <ul>
 *   <li>No durable restart (OPS-4): {@link #open} deletes every block file ({@code blk-*.okv}) left in the
 *       directory by an earlier process; other files are left alone. The cache starts cold.</li>
 *   <li>{@link #submit} never blocks: a full queue is an explicit {@link TierRefusal#WRITE_QUEUE_FULL},
 *       counted, never a silent drop (INV-9).</li>
 *   <li>A block is resident on SSD only after its bytes are written: the residency put is reported to the
 *       {@link ResidencyListener} after the write completed, and reads see completed writes only.</li>
 *   <li>Space: before installing a written block, whole files are evicted in LRU order (pinned ones
 *       skipped, each reported as a delete) until the block fits; if nothing evictable is left the written
 *       file is discarded and {@link TierRefusal#NO_EVICTABLE_SPACE} counted.</li>
 *   <li>A later submit or an explicit evict of the same key supersedes a queued write: the older write is
 *       discarded when dequeued (counted as superseded), so an evicted key is never resurrected.</li>
 * </ul>
 */
public final class SsdTier implements AutoCloseable {
    static final String FILE_PREFIX = "blk-";
    static final String FILE_SUFFIX = ".okv";

    private final Path dir;
    private final long bytesMax;
    private final int pinsMax;
    private final ResidencyListener listener;
    private final CountBytesBound queueBound;
    private final ArrayBlockingQueue<WriteJob> queue;
    private final Thread writer;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition progress = lock.newCondition();
    private final LinkedHashMap<StateKey, FileBlock> index = new LinkedHashMap<>(1024, 0.75f, true);
    /** The latest submitted ticket per key; a dequeued job whose ticket is not here is superseded. */
    private final Map<StateKey, Long> pendingTicket = new HashMap<>();
    private final TierCounters counters = new TierCounters();
    private long nextTicket = 1;
    private long completedThrough;
    private long nextFileId = 1;
    private long residentBytes;
    private long supersededWrites;
    private int pinsHeld;
    private boolean closed;

    private SsdTier(Path dir, long bytesMax, int pinsMax, int queueCountMax, long queueBytesMax,
                    ResidencyListener listener) {
        this.dir = dir;
        this.bytesMax = bytesMax;
        this.pinsMax = pinsMax;
        this.listener = listener;
        this.queueBound = new CountBytesBound("SSD write queue", queueCountMax, queueBytesMax);
        this.queue = new ArrayBlockingQueue<>(queueCountMax);
        this.writer = Thread.ofPlatform().name("orbitkv-ssd-writer").daemon(true).unstarted(this::writeLoop);
    }

    /**
     * Empties {@code dir} of earlier block files and starts the writer.
     *
     * @param bytesMax bound on resident file bytes
     * @param pinsMax bound on concurrently pinned blocks
     * @param queueCountMax bound on queued writes
     * @param queueBytesMax bound on queued payload bytes
     */
    public static SsdTier open(Path dir, long bytesMax, int pinsMax, int queueCountMax, long queueBytesMax,
                               ResidencyListener listener) throws IOException {
        SsdTier tier = openPaused(dir, bytesMax, pinsMax, queueCountMax, queueBytesMax, listener);
        tier.startWriter();
        return tier;
    }

    /** For tests: an open tier whose writer has not started, so queue bounds can be observed exactly. */
    static SsdTier openPaused(Path dir, long bytesMax, int pinsMax, int queueCountMax, long queueBytesMax,
                              ResidencyListener listener) throws IOException {
        Objects.requireNonNull(listener, "listener");
        if (bytesMax < 1 || pinsMax < 1) {
            throw new IllegalArgumentException("SSD tier needs bytesMax >= 1 and pinsMax >= 1, got "
                    + bytesMax + ", " + pinsMax);
        }
        Files.createDirectories(dir);
        try (DirectoryStream<Path> old = Files.newDirectoryStream(dir, FILE_PREFIX + "*" + FILE_SUFFIX)) {
            for (Path p : old) {
                Files.deleteIfExists(p);
            }
        }
        return new SsdTier(dir, bytesMax, pinsMax, queueCountMax, queueBytesMax, listener);
    }

    void startWriter() {
        writer.start();
    }

    /** The outcome of {@link #submit}. */
    public sealed interface Submitted {
        /** Queued; {@link #awaitWritten} with this ticket waits for it. */
        record Queued(long ticket) implements Submitted {}

        /** Not queued. */
        record Refused(TierRefusal reason, String message) implements Submitted {}
    }

    /**
     * Queues an asynchronous write of {@code payload} (not copied: the caller hands it over and must not
     * modify it). Never blocks.
     */
    public Submitted submit(StateKey key, byte[] payload) {
        if (payload.length > bytesMax) {
            counters.refused(TierRefusal.BLOCK_EXCEEDS_TIER);
            return new Submitted.Refused(TierRefusal.BLOCK_EXCEEDS_TIER,
                    "block of " + payload.length + " bytes exceeds the SSD tier of " + bytesMax + " bytes");
        }
        lock.lock();
        try {
            if (closed) {
                counters.refused(TierRefusal.CLOSED);
                return new Submitted.Refused(TierRefusal.CLOSED, "SSD tier is closed");
            }
            if (!queueBound.tryAdd(payload.length)) {
                counters.refused(TierRefusal.WRITE_QUEUE_FULL);
                return new Submitted.Refused(TierRefusal.WRITE_QUEUE_FULL, "SSD write queue is full: "
                        + queueBound.count() + "/" + queueBound.countMax() + " writes, " + queueBound.bytes()
                        + "/" + queueBound.bytesMax() + " bytes");
            }
            long ticket = nextTicket++;
            pendingTicket.put(key, ticket);
            // Cannot fail: the queue capacity equals the count bound, checked above under the same lock.
            queue.add(new WriteJob(key, payload, ticket));
            return new Submitted.Queued(ticket);
        } finally {
            lock.unlock();
        }
    }

    /** The last ticket handed out ({@code 0} if none): {@code awaitWritten(lastTicket())} drains submitted writes. */
    public long lastTicket() {
        lock.lock();
        try {
            return nextTicket - 1;
        } finally {
            lock.unlock();
        }
    }

    /** Waits until every write up to {@code ticket} has completed (installed, superseded or refused). */
    public boolean awaitWritten(long ticket, long timeoutMs) throws InterruptedException {
        long remainingNs = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        lock.lock();
        try {
            while (completedThrough < ticket) {
                if (remainingNs <= 0 || closed) {
                    return completedThrough >= ticket;
                }
                remainingNs = progress.awaitNanos(remainingNs);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Pins the file of {@code key} for reading. */
    public PinOutcome pin(StateKey key) {
        lock.lock();
        try {
            if (closed) {
                return new PinOutcome.Refused(TierRefusal.CLOSED, "SSD tier is closed");
            }
            FileBlock block = index.get(key);
            if (block == null) {
                return new PinOutcome.NotResident();
            }
            if (pinsHeld >= pinsMax) {
                counters.refused(TierRefusal.PINS_EXHAUSTED);
                return new PinOutcome.Refused(TierRefusal.PINS_EXHAUSTED, "all " + pinsMax + " SSD pins are held");
            }
            block.pins++;
            pinsHeld++;
            counters.read();
            return new PinOutcome.Pinned(new Pin(block));
        } finally {
            lock.unlock();
        }
    }

    /** Removes the SSD residence of {@code key} and cancels a queued write of it; true if either existed. */
    public boolean evict(StateKey key) {
        lock.lock();
        try {
            boolean cancelled = pendingTicket.remove(key) != null;
            FileBlock block = index.remove(key);
            if (block != null) {
                dropResidence(block);
            }
            return cancelled || block != null;
        } finally {
            lock.unlock();
        }
    }

    /** The residence of {@code key} in this tier (sequence and size), without pinning; counts as a use for LRU. */
    public java.util.Optional<Residence> residence(StateKey key) {
        lock.lock();
        try {
            FileBlock b = index.get(key);
            return b == null ? java.util.Optional.empty() : java.util.Optional.of(new Residence(Medium.SSD, b.sequence, b.size));
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

    public TierUsage usage() {
        lock.lock();
        try {
            return new TierUsage(Medium.SSD, index.size(), residentBytes, bytesMax, residentBytes, pinsHeld, pinsMax);
        } finally {
            lock.unlock();
        }
    }

    /** Queued writes (count, bytes). */
    public long[] queueDepth() {
        return new long[] {queueBound.count(), queueBound.bytes()};
    }

    public long supersededWrites() {
        lock.lock();
        try {
            return supersededWrites;
        } finally {
            lock.unlock();
        }
    }

    public TierCounters counters() {
        return counters;
    }

    /** Stops the writer (queued writes are discarded: no durable restart) and deletes the block files. */
    @Override
    public void close() throws IOException {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            progress.signalAll();
        } finally {
            lock.unlock();
        }
        writer.interrupt();
        try {
            writer.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, FILE_PREFIX + "*" + FILE_SUFFIX)) {
            for (Path p : files) {
                Files.deleteIfExists(p);
            }
        }
    }

    private void writeLoop() {
        while (true) {
            WriteJob job;
            try {
                job = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            queueBound.release(job.payload.length);
            if (!isCurrent(job)) {
                finish(job, null);
                continue;
            }
            Path path;
            long fileId;
            lock.lock();
            try {
                fileId = nextFileId++;
            } finally {
                lock.unlock();
            }
            path = dir.resolve(FILE_PREFIX + fileId + FILE_SUFFIX);
            try (FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer src = ByteBuffer.wrap(job.payload);
                while (src.hasRemaining()) {
                    ch.write(src);
                }
            } catch (IOException e) {
                counters.refused(TierRefusal.IO_ERROR);
                deleteQuietly(path);
                finish(job, null);
                continue;
            }
            finish(job, new FileBlock(job.key, path, job.payload.length));
        }
    }

    private boolean isCurrent(WriteJob job) {
        lock.lock();
        try {
            return !closed && Objects.equals(pendingTicket.get(job.key), job.ticket);
        } finally {
            lock.unlock();
        }
    }

    /** Installs a written block (if still current and it fits) and advances the completed ticket. */
    private void finish(WriteJob job, FileBlock written) {
        Path discard = null;
        lock.lock();
        try {
            boolean current = !closed && Objects.equals(pendingTicket.get(job.key), job.ticket);
            if (!current) {
                supersededWrites += closed ? 0 : 1;
                discard = written == null ? null : written.path;
            } else if (written == null) {
                pendingTicket.remove(job.key); // the write failed (counted as IO_ERROR)
            } else {
                pendingTicket.remove(job.key);
                if (makeRoom(written.size)) {
                    FileBlock old = index.put(job.key, written);
                    if (old != null) {
                        residentBytes -= old.size;
                        retire(old);
                    }
                    residentBytes += written.size;
                    written.sequence = listener.onResident(job.key, Medium.SSD, written.size);
                    counters.stored();
                } else {
                    counters.refused(TierRefusal.NO_EVICTABLE_SPACE);
                    discard = written.path;
                }
            }
            completedThrough = job.ticket;
            progress.signalAll();
        } finally {
            lock.unlock();
        }
        if (discard != null) {
            deleteQuietly(discard);
        }
    }

    private boolean makeRoom(long size) {
        while (residentBytes + size > bytesMax) {
            FileBlock victim = null;
            Iterator<FileBlock> it = index.values().iterator();
            while (it.hasNext()) {
                FileBlock b = it.next();
                if (b.pins == 0) {
                    victim = b;
                    break;
                }
            }
            if (victim == null) {
                return false;
            }
            index.remove(victim.key);
            dropResidence(victim);
            counters.evicted();
        }
        return true;
    }

    private void dropResidence(FileBlock block) {
        residentBytes -= block.size;
        listener.onEvicted(block.key, Medium.SSD);
        retire(block);
    }

    private void retire(FileBlock block) {
        block.retired = true;
        if (block.pins == 0) {
            deleteQuietly(block.path);
        }
    }

    private void unpin(FileBlock block) {
        lock.lock();
        try {
            block.pins--;
            pinsHeld--;
            if (block.retired && block.pins == 0) {
                deleteQuietly(block.path);
            }
        } finally {
            lock.unlock();
        }
    }

    private void deleteQuietly(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            counters.refused(TierRefusal.IO_ERROR);
        }
    }

    private record WriteJob(StateKey key, byte[] payload, long ticket) {}

    private static final class FileBlock {
        final StateKey key;
        final Path path;
        final long size;
        long sequence;
        int pins;
        boolean retired;

        FileBlock(StateKey key, Path path, long size) {
            this.key = key;
            this.path = path;
            this.size = size;
        }
    }

    private final class Pin extends TierPin {
        private final FileBlock block;

        Pin(FileBlock block) {
            super(block.key, Medium.SSD, block.size);
            this.block = block;
        }

        @Override
        public long sequence() {
            return block.sequence;
        }

        @Override
        void copyBytes(ByteBuffer view) {
            try (FileChannel ch = FileChannel.open(block.path, StandardOpenOption.READ)) {
                long pos = 0;
                while (view.hasRemaining()) {
                    int n = ch.read(view, pos);
                    if (n < 0) {
                        throw new IOException("SSD block file " + block.path + " is shorter than " + block.size);
                    }
                    pos += n;
                }
            } catch (IOException e) {
                counters.refused(TierRefusal.IO_ERROR);
                throw new UncheckedIOException(e);
            }
        }

        @Override
        void release() {
            unpin(block);
        }
    }
}
