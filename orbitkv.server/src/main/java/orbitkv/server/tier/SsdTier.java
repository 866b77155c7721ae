package orbitkv.server.tier;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;
import orbitkv.transfer.PayloadSource.PayloadLocation;
import orbitkv.transfer.PayloadSource.PinResult;

/**
 * The SSD payload tier (DESIGN §7): one file per block under a directory, bounded by {@code bytesMax},
 * written by one asynchronous writer thread from a queue bounded in count and bytes.
 *
 * <ul>
 *   <li>One Manager per directory (issue 20 item 1): {@link #open} takes an exclusive lock on
 *       {@code <dir>/orbitkv.lock} before touching anything and refuses with {@link LocalResourceRefused},
 *       naming the holder (pid, node, instance, start time, incarnation once known) that the lock file
 *       holds. Block files are named {@code blk-<node>-<instance>-<n>.okv}: no two processes ever share a
 *       name.</li>
 *   <li>No durable restart (OPS-4): once the lock is held, every block file ({@code blk-*.okv}) left in the
 *       directory by an earlier process is deleted; other files are left alone. The cache starts cold.</li>
 *   <li>{@link #submit} never blocks: a full queue is an explicit {@link TierRefusal#WRITE_QUEUE_FULL},
 *       counted, never a silent drop (INV-9). The queued bytes are not copied: a job holds the bytes it was
 *       given (the DRAM residence, under a write-through pin) until its write completes.</li>
 *   <li>A block is resident on SSD only after its bytes are written: the residency put is reported to the
 *       {@link ResidencyListener} after the write completed, with the CRC32C computed when the block was
 *       saved; every read is verified against it (issue 20 item 2).</li>
 *   <li>Space: before installing a written block, whole files are evicted in LRU order (pinned ones
 *       skipped, each reported as a delete) until the block fits; if nothing evictable is left the written
 *       file is discarded and {@link TierRefusal#NO_EVICTABLE_SPACE} counted.</li>
 *   <li>A later submit or an explicit evict of the same key supersedes a queued write: the older write is
 *       discarded when dequeued (counted as superseded), so an evicted key is never resurrected.</li>
 * </ul>
 */
public final class SsdTier implements AutoCloseable {
    static final String FILE_PREFIX = SsdFiles.FILE_PREFIX;
    /** The directory's lock file (never deleted, so concurrent starters always race on one inode). */
    public static final String LOCK_FILE = "orbitkv.lock";

    private final Path dir;
    private final TierInstance instance;
    private final OwnerLock dirLock;
    private final long bytesMax;
    private final CountBytesBound queueBound;
    private final ArrayBlockingQueue<WriteJob> queue;
    private final Thread writer;
    private final ResidenceTable<Path> table;
    private final Condition progress;
    /** The latest submitted ticket per key; a dequeued job whose ticket is not here is superseded. Guarded by the table lock. */
    private final Map<StateKey, Long> pendingTicket = new HashMap<>();
    private long nextTicket = 1;
    private long completedThrough;
    private long nextFileId = 1;
    private long supersededWrites;
    /** Write faults (issue 33): counted, logged once per interval, reported in /health and status. */
    private final TierFaults faults = new TierFaults(Medium.SSD);
    /** Failed writes a sync answers for, for {@link #awaitSubmittedWrites} (guarded by the table lock). */
    private final FailedWrites failedWrites = new FailedWrites();

    private SsdTier(Path dir, TierInstance instance, OwnerLock dirLock, long bytesMax, int pinsMax, long pinnedBytesMax,
                    int queueCountMax, long queueBytesMax, ResidencyListener listener) {
        this.dir = dir;
        this.instance = instance;
        this.dirLock = dirLock;
        this.bytesMax = bytesMax;
        this.queueBound = new CountBytesBound("SSD write queue", queueCountMax, queueBytesMax);
        this.queue = new ArrayBlockingQueue<>(queueCountMax);
        this.table = new ResidenceTable<>(Medium.SSD, listener, pinsMax, pinnedBytesMax, this::deleteQuietly);
        this.progress = table.lock.newCondition();
        this.writer = Thread.ofPlatform().name("orbitkv-ssd-writer").daemon(true).unstarted(this::writeLoop);
    }

    /** For tests: a fresh instance; pinned bytes bounded by the tier size. */
    public static SsdTier open(Path dir, long bytesMax, int pinsMax, int queueCountMax, long queueBytesMax,
                               ResidencyListener listener) throws IOException {
        return open(dir, TierInstance.random("test"), bytesMax, pinsMax, bytesMax, queueCountMax, queueBytesMax, listener);
    }

    /**
     * Locks {@code dir}, empties it of earlier block files and starts the writer.
     *
     * @param bytesMax bound on resident file bytes
     * @param pinsMax bound on concurrently pinned blocks
     * @param pinnedBytesMax bound on pinned payload bytes
     * @param queueCountMax bound on queued writes
     * @param queueBytesMax bound on queued payload bytes
     * @throws LocalResourceRefused if another live Manager (or another tier of this process) holds {@code dir}
     */
    public static SsdTier open(Path dir, TierInstance instance, long bytesMax, int pinsMax, long pinnedBytesMax,
                               int queueCountMax, long queueBytesMax, ResidencyListener listener) throws IOException {
        SsdTier tier = openPaused(dir, instance, bytesMax, pinsMax, pinnedBytesMax, queueCountMax, queueBytesMax, listener);
        tier.startWriter();
        return tier;
    }

    /** For tests: an open tier whose writer has not started, so queue bounds can be observed exactly. */
    static SsdTier openPaused(Path dir, long bytesMax, int pinsMax, int queueCountMax, long queueBytesMax,
                              ResidencyListener listener) throws IOException {
        return openPaused(dir, TierInstance.random("test"), bytesMax, pinsMax, bytesMax, queueCountMax, queueBytesMax,
                listener);
    }

    private static SsdTier openPaused(Path dir, TierInstance instance, long bytesMax, int pinsMax, long pinnedBytesMax,
                                      int queueCountMax, long queueBytesMax, ResidencyListener listener) throws IOException {
        Objects.requireNonNull(listener, "listener");
        if (bytesMax < 1 || pinsMax < 1 || pinnedBytesMax < 1) {
            throw new IllegalArgumentException("SSD tier needs bytesMax, pinsMax and pinnedBytesMax >= 1, got "
                    + bytesMax + ", " + pinsMax + ", " + pinnedBytesMax);
        }
        OwnerLock lock = SsdFiles.lockAndEmpty(dir, instance);
        try {
            return new SsdTier(dir, instance, lock, bytesMax, pinsMax, pinnedBytesMax, queueCountMax, queueBytesMax, listener);
        } catch (RuntimeException e) {
            lock.close();
            throw e;
        }
    }

    void startWriter() {
        writer.start();
    }

    /** Records which incarnation this instance serves in the lock file (the tiers open before registration). */
    void recordIncarnation(String incarnation) throws IOException {
        dirLock.rewrite(instance.holderText(incarnation));
    }

    /** The outcome of {@link #submit}. */
    public sealed interface Submitted {
        /** Queued; {@link #awaitWritten} with this ticket waits for it. */
        record Queued(long ticket) implements Submitted {}

        /** Not queued; {@code release} was run. */
        record Refused(TierRefusal reason, String message) implements Submitted {}
    }

    /**
     * Queues an asynchronous write of {@code payload}, saved with checksum {@code crc32c}. The bytes are not
     * copied: they must stay valid and unmodified until {@code release} runs, which happens exactly once,
     * after the write or at once on a refusal. Never blocks.
     */
    public Submitted submit(StateKey key, MemorySegment payload, int crc32c, Runnable release) {
        Submitted s = enqueue(key, payload, crc32c, release);
        if (s instanceof Submitted.Refused) {
            release.run();
        }
        return s;
    }

    private Submitted enqueue(StateKey key, MemorySegment payload, int crc32c, Runnable release) {
        long size = payload.byteSize();
        if (size > bytesMax) {
            table.counters().refused(TierRefusal.BLOCK_EXCEEDS_TIER);
            return new Submitted.Refused(TierRefusal.BLOCK_EXCEEDS_TIER,
                    "block of " + size + " bytes exceeds the SSD tier of " + bytesMax + " bytes");
        }
        table.lock.lock();
        try {
            if (table.closed()) {
                table.counters().refused(TierRefusal.CLOSED);
                return new Submitted.Refused(TierRefusal.CLOSED, "SSD tier is closed");
            }
            if (!queueBound.tryAdd(size)) {
                table.counters().refused(TierRefusal.WRITE_QUEUE_FULL);
                return new Submitted.Refused(TierRefusal.WRITE_QUEUE_FULL, "SSD write queue is full: "
                        + queueBound.count() + "/" + queueBound.countMax() + " writes, " + queueBound.bytes()
                        + "/" + queueBound.bytesMax() + " bytes");
            }
            long ticket = nextTicket++;
            pendingTicket.put(key, ticket);
            // Cannot fail: the queue capacity equals the count bound, checked above under the same lock.
            queue.add(new WriteJob(key, payload, crc32c, release, ticket));
            return new Submitted.Queued(ticket);
        } finally {
            table.lock.unlock();
        }
    }

    /** The last ticket handed out ({@code 0} if none): {@code awaitWritten(lastTicket())} drains submitted writes. */
    public long lastTicket() {
        table.lock.lock();
        try {
            return nextTicket - 1;
        } finally {
            table.lock.unlock();
        }
    }

    /** Waits until every write up to {@code ticket} has completed (installed, superseded or refused). */
    public boolean awaitWritten(long ticket, long timeoutMs) throws InterruptedException {
        long remainingNs = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        table.lock.lock();
        try {
            while (completedThrough < ticket) {
                if (remainingNs <= 0 || table.closed()) {
                    return completedThrough >= ticket;
                }
                remainingNs = progress.awaitNanos(remainingNs);
            }
            return true;
        } finally {
            table.lock.unlock();
        }
    }

    /**
     * What {@link #awaitSubmittedWrites} found: whether every write submitted before the call completed in time, and
     * how many of the writes it covers failed (see there), the last failure's message if any.
     */
    public record WritesAwaited(boolean completed, long failed, String lastFailure) {}

    /**
     * Waits for every write submitted before this call (like {@link #awaitWritten} of {@link #lastTicket()}) and
     * counts the failed writes it covers (issue 33: a sync must not claim 200 for writes that failed): the writes
     * that had not completed when the call began, and, if the tier is still failing when the wait ends (its last
     * completed write failed), every failed write since the tier started failing. A failure followed by a write
     * that succeeded before the call began is not counted here (it stays in the counters and the log).
     */
    public WritesAwaited awaitSubmittedWrites(long timeoutMs) throws InterruptedException {
        long from;
        long to;
        table.lock.lock();
        try {
            to = nextTicket - 1;
            from = completedThrough;
        } finally {
            table.lock.unlock();
        }
        boolean completed = awaitWritten(to, timeoutMs);
        table.lock.lock();
        try {
            long failed = failedWrites.countIn(from, to); // still failing: every failure of this episode counts
            return new WritesAwaited(completed, failed,
                    failed == 0 ? null : faults.current().map(TierFaults.Fault::message).orElse(null));
        } finally {
            table.lock.unlock();
        }
    }

    /** Write faults of the SSD directory (issue 33): counted, logged per interval, reported in /health and status. */
    public TierFaults faults() {
        return faults;
    }

    /** Pins the SSD residence of {@code key} iff its sequence is exactly {@code sequence}. */
    public PinResult pin(StateKey key, long sequence) {
        return table.pin(key, sequence, true, e -> new SsdPin(table, e));
    }

    /** Removes the SSD residence of {@code key} and cancels a queued write of it; true if either existed. */
    public boolean evict(StateKey key) {
        table.lock.lock();
        try {
            boolean cancelled = pendingTicket.remove(key) != null;
            return table.evict(key) || cancelled;
        } finally {
            table.lock.unlock();
        }
    }

    /**
     * Re-announces every SSD residence under a fresh sequence of the current listener (a heal); returns how
     * many. Writes still queued become residences later and report to the current listener then.
     */
    int republish() {
        return table.republish();
    }

    /** The residence of {@code key} in this tier, without pinning; counts as a use for LRU. */
    public Optional<Residence> residence(StateKey key) {
        return table.residence(key);
    }

    public boolean contains(StateKey key) {
        return table.contains(key);
    }

    public TierUsage usage() {
        table.lock.lock();
        try {
            long resident = table.residentBytes();
            return table.usage(bytesMax, resident, 0);
        } finally {
            table.lock.unlock();
        }
    }

    /** Queued writes (count, bytes). */
    public long[] queueDepth() {
        return new long[] {queueBound.count(), queueBound.bytes()};
    }

    public long supersededWrites() {
        table.lock.lock();
        try {
            return supersededWrites;
        } finally {
            table.lock.unlock();
        }
    }

    public TierCounters counters() {
        return table.counters();
    }

    /** The file of the current residence of {@code key} (tests that break stored bytes on purpose). */
    Optional<Path> fileOf(StateKey key) {
        return table.get(key).map(e -> e.storage);
    }

    /**
     * Stops the writer (queued writes are discarded and their bytes released: no durable restart), deletes
     * the block files and releases the directory lock.
     */
    @Override
    public void close() throws IOException {
        table.lock.lock();
        try {
            if (!table.close()) {
                return;
            }
            progress.signalAll();
        } finally {
            table.lock.unlock();
        }
        writer.interrupt();
        try {
            writer.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (WriteJob job; (job = queue.poll()) != null; ) {
            queueBound.release(job.payload.byteSize());
            job.release.run();
        }
        try {
            SsdFiles.deleteBlockFiles(dir);
        } finally {
            dirLock.close();
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
            queueBound.release(job.payload.byteSize());
            ResidenceTable.Entry<Path> written = null;
            boolean failed = false;
            try {
                if (isCurrent(job)) {
                    written = write(job);
                    failed = written == null;
                }
            } finally {
                job.release.run(); // the source bytes are free before the write counts as completed
            }
            finish(job, written, failed);
        }
    }

    /** Writes one job's file; null (counted IO_ERROR) if the write failed. */
    private ResidenceTable.Entry<Path> write(WriteJob job) {
        long fileId;
        table.lock.lock();
        try {
            fileId = nextFileId++;
        } finally {
            table.lock.unlock();
        }
        Path path = SsdFiles.blockFile(dir, instance, fileId);
        try {
            SsdFiles.write(path, job.payload);
        } catch (IOException | IllegalStateException e) { // IllegalStateException: the source arena closed
            table.counters().refused(TierRefusal.IO_ERROR);
            deleteQuietly(path);
            if (e instanceof IOException) { // a full disk, a failing device: logged per interval, /health degraded
                faults.fault(TierRefusal.IO_ERROR, "writing " + path + " (" + job.payload.byteSize() + " bytes): " + e);
            }
            return null;
        }
        faults.writeSucceeded();
        return new ResidenceTable.Entry<>(job.key, job.payload.byteSize(), job.crc32c, path);
    }

    private boolean isCurrent(WriteJob job) {
        table.lock.lock();
        try {
            return !table.closed() && Objects.equals(pendingTicket.get(job.key), job.ticket);
        } finally {
            table.lock.unlock();
        }
    }

    /** Installs a written block (if still current and it fits) and advances the completed ticket. */
    private void finish(WriteJob job, ResidenceTable.Entry<Path> written, boolean failed) {
        Path discard = null;
        table.lock.lock();
        try {
            boolean current = !table.closed() && Objects.equals(pendingTicket.get(job.key), job.ticket);
            if (!current) {
                supersededWrites += table.closed() ? 0 : 1;
                discard = written == null ? null : written.storage;
            } else if (written == null) {
                pendingTicket.remove(job.key); // the write failed (counted as IO_ERROR)
            } else {
                pendingTicket.remove(job.key);
                if (table.makeRoom(written.sizeBytes, bytesMax)) {
                    table.install(written);
                } else {
                    table.counters().refused(TierRefusal.NO_EVICTABLE_SPACE);
                    discard = written.storage;
                }
            }
            failedWrites.completed(job.ticket, failed, written != null);
            completedThrough = job.ticket;
            progress.signalAll();
        } finally {
            table.lock.unlock();
        }
        if (discard != null) {
            deleteQuietly(discard);
        }
    }

    private void deleteQuietly(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            table.counters().refused(TierRefusal.IO_ERROR);
        }
    }

    private record WriteJob(StateKey key, MemorySegment payload, int crc32c, Runnable release, long ticket) {}
}
