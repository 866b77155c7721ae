package orbitkv.inventory.source;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.JournalStatus;
import orbitkv.inventory.Medium;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.PublicationStamp;
import orbitkv.inventory.ReadOutcome;
import orbitkv.inventory.ResidencePage;
import orbitkv.inventory.ResidencePosition;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SecondsHistogram;
import orbitkv.inventory.SnapshotScan;
import orbitkv.inventory.StateKey;

/**
 * The source inventory of one incarnation (DESIGN §4; INV-3, INV-4, BND-1, BND-5, PERF-1, DELTA-14).
 * One {@link ReentrantLock} (the inventory lock) guards the ordered resident map and the journal; a
 * mutation assigns the next sequence, changes the map, appends to the journal and stamps the publication
 * time in one critical section. Readers copy bounded journal ranges or map pages under the lock and
 * coalesce, filter-sort and encode after releasing it.
 */
public final class SourceInventory implements InventorySource {
    /** Histogram bounds of the intentional coalescing wait, in seconds (0.1 ms .. 1 s). */
    static final double[] WAIT_BUCKETS_SECONDS = {0.0001, 0.0005, 0.001, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.025, 0.1, 1.0};

    private final InventoryConfig config;
    private final LongSupplier clock;
    private final ReentrantLock lock = new ReentrantLock();
    private final TreeMap<ResidenceKey, ResidenceRecord> resident = new TreeMap<>();
    private final Journal journal;
    private final SequenceSignal signal;
    private final IntervalPartitioner partitioner;
    private final SecondsRecorder intentionalWaitSeconds = new SecondsRecorder(WAIT_BUCKETS_SECONDS);
    private volatile PublicationStamp lastPublication = PublicationStamp.NONE;

    private SourceInventory(InventoryConfig config, LongSupplier clock) {
        this.config = Objects.requireNonNull(config, "inventory config must not be null");
        this.clock = Objects.requireNonNull(clock, "monotonic clock must not be null");
        this.journal = new Journal(config.journalRecordsMax(), config.journalBytesMax());
        this.signal = new SequenceSignal(config.waitersMax());
        this.partitioner = new IntervalPartitioner(config, new LockedCopier());
    }

    /** Factory behind {@link InventorySource#create}. */
    public static InventorySource create(InventoryConfig config, LongSupplier monoNanos) {
        return new SourceInventory(config, monoNanos);
    }

    /**
     * The implementation behind an {@link InventorySource} handed to the session end, which also needs the
     * reader hooks that are not part of the contract (coalescing windows, the armed wake-up).
     *
     * @throws IllegalArgumentException if {@code source} was not made by {@link InventorySource#create}
     */
    public static SourceInventory of(InventorySource source) {
        if (source instanceof SourceInventory s) {
            return s;
        }
        throw new IllegalArgumentException("the session serves an InventorySource made by InventorySource.create, got "
                + (source == null ? "null" : source.getClass().getName()));
    }

    @Override
    public InventoryConfig config() {
        return config;
    }

    @Override
    public MutationResult put(StateKey key, Medium medium, long sizeBytes) {
        Objects.requireNonNull(key, "put key must not be null");
        Objects.requireNonNull(medium, "put medium must not be null");
        if (sizeBytes < 0) {
            throw new IllegalArgumentException("put sizeBytes must be >= 0, got " + sizeBytes);
        }
        ResidenceRecord record;
        long stamp;
        lock.lock();
        try {
            record = ResidenceRecord.put(key, medium, journal.nextSequence(), sizeBytes);
            resident.put(new ResidenceKey(key, medium), record);
            journal.append(record);
            stamp = publish(record.sequence());
        } finally {
            lock.unlock();
        }
        signal.publish(record.sequence());
        return new MutationResult.Recorded(record, stamp);
    }

    @Override
    public MutationResult delete(StateKey key, Medium medium) {
        Objects.requireNonNull(key, "delete key must not be null");
        Objects.requireNonNull(medium, "delete medium must not be null");
        ResidenceRecord record;
        long stamp;
        lock.lock();
        try {
            if (resident.remove(new ResidenceKey(key, medium)) == null) {
                return new MutationResult.NotResident(key, medium);
            }
            record = ResidenceRecord.delete(key, medium, journal.nextSequence());
            journal.append(record);
            stamp = publish(record.sequence());
        } finally {
            lock.unlock();
        }
        signal.publish(record.sequence());
        return new MutationResult.Recorded(record, stamp);
    }

    /** Under the lock, after the map change and the journal append (PERF-1). */
    private long publish(long sequence) {
        long now = clock.getAsLong();
        lastPublication = new PublicationStamp(sequence, now);
        return now;
    }

    @Override
    public long headSequence() {
        return lastPublication.sequence();
    }

    @Override
    public long oldestRetainedSequence() {
        lock.lock();
        try {
            return journal.oldestRetained();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public JournalStatus status() {
        lock.lock();
        try {
            return new JournalStatus(journal.head(), journal.oldestRetained(), journal.size(), journal.bytes(),
                    journal.peakBytes(), journal.trimmed(), lastPublication);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public PublicationStamp lastPublication() {
        return lastPublication;
    }

    @Override
    public ReadOutcome read(long fromExclusive, Scope scope, int intervalsMax) {
        long head = headSequence();
        return read(fromExclusive, Math.max(head, fromExclusive), scope, intervalsMax);
    }

    @Override
    public ReadOutcome read(long fromExclusive, long throughInclusive, Scope scope, int intervalsMax) {
        Objects.requireNonNull(scope, "read scope must not be null");
        if (fromExclusive < 0) {
            throw new IllegalArgumentException("read fromExclusive must be >= 0, got " + fromExclusive);
        }
        if (throughInclusive < fromExclusive) {
            throw new IllegalArgumentException("read throughInclusive (" + throughInclusive + ") must be >= fromExclusive (" + fromExclusive + ")");
        }
        if (intervalsMax < 1) {
            throw new IllegalArgumentException("read intervalsMax must be >= 1, got " + intervalsMax);
        }
        long head = headSequence();
        if (fromExclusive > head) {
            return new ReadOutcome.BeyondHead(fromExclusive, head);
        }
        return partitioner.read(fromExclusive, Math.min(throughInclusive, head), scope, intervalsMax);
    }

    @Override
    public SnapshotScan openSnapshot(Scope scope) {
        Objects.requireNonNull(scope, "snapshot scope must not be null");
        lock.lock();
        try {
            return new SnapshotPager(this, scope, journal.head());
        } finally {
            lock.unlock();
        }
    }

    /**
     * Arms {@code wake} to run once when the head passes {@code seenSequence} (DELTA-14: one append wakes
     * every armed reader); see {@link SequenceSignal#arm}. At most {@code waitersMax} readers are armed.
     */
    public AwaitOutcome armWakeAbove(long seenSequence, Runnable wake) {
        return signal.arm(seenSequence, wake);
    }

    /** Disarms {@code wake} (its reader ended). */
    public void disarmWake(Runnable wake) {
        signal.disarm(wake);
    }

    /** A new coalescing window on this source's clock and configuration (PUB-4, PUB-5). */
    public CoalescingWindow openWindow() {
        return openWindow(clock);
    }

    /** A new coalescing window on the reader's clock (a session's {@code ProtocolClock}, issue 25). */
    public CoalescingWindow openWindow(LongSupplier readerClock) {
        return new WindowTimer(config.coalescingWindowMs(), config.maxIntentionalWaitMs(), config.immediateReadsPerWindow(),
                WindowTimer.testDelayMs(), Objects.requireNonNull(readerClock, "reader clock"), intentionalWaitSeconds);
    }

    @Override
    public SecondsHistogram intentionalWaitSeconds() {
        return intentionalWaitSeconds.snapshot();
    }

    /** Readers currently armed on the sequence signal (for tests and diagnostics). */
    int signalWaiters() {
        return signal.waiting();
    }

    @Override
    public ResidencePage residences(Optional<Namespace> namespace, Optional<ResidencePosition> after, int limit) {
        Objects.requireNonNull(namespace, "namespace must not be null (use Optional.empty())");
        Objects.requireNonNull(after, "after must not be null (use Optional.empty())");
        if (limit < 1 || limit > ResidencePage.LIMIT_MAX) {
            throw new IllegalArgumentException("residence page limit must be 1.." + ResidencePage.LIMIT_MAX + ", got " + limit);
        }
        ResidenceKey from = after.map(p -> new ResidenceKey(p.key(), p.medium())).orElse(null);
        boolean inclusive = false;
        if (namespace.isPresent()) {
            ResidenceKey first = ResidenceKey.firstOf(namespace.get());
            if (from == null || from.compareTo(first) < 0) {
                from = first;
                inclusive = true;
            }
        }
        List<ResidenceRecord> out = new ArrayList<>(Math.min(limit, 256));
        lock.lock();
        try {
            Iterator<ResidenceRecord> it = (from == null ? resident : resident.tailMap(from, inclusive)).values().iterator();
            while (it.hasNext()) {
                ResidenceRecord r = it.next();
                if (namespace.isPresent() && !r.key().namespace().equals(namespace.get())) {
                    break; // past the namespace: resident-map order keeps one namespace contiguous
                }
                if (out.size() == limit) {
                    return new ResidencePage(out, Optional.of(ResidencePosition.of(out.getLast())), journal.head());
                }
                out.add(r);
            }
            return new ResidencePage(out, Optional.empty(), journal.head());
        } finally {
            lock.unlock();
        }
    }

    /** A bounded batch of the ordered resident map, taken under one lock hold (SNAP-2). */
    record ScanBatch(List<ResidenceRecord> records, ResidenceKey last, boolean exhausted, long bytes, boolean stoppedByBytes) {}

    /**
     * Under the lock: in-scope records after {@code after} (null = from the start), at most
     * {@code recordsMax} records and {@code bytesMax} accounted bytes (at least one record if any and
     * {@code firstOfPage}: a page holds at least one record, but a batch continuing a page never passes the
     * page's byte budget), examining at most {@code examineMax} entries; out-of-scope namespaces are skipped
     * by seeking to the next subscribed namespace, so filtering never walks or clones the whole map (BND-4).
     */
    ScanBatch scanBatch(ResidenceKey after, Scope scope, int recordsMax, long bytesMax, int examineMax, boolean firstOfPage) {
        List<ResidenceRecord> out = new ArrayList<>(Math.min(recordsMax, 256));
        long bytes = 0;
        int examined = 0;
        ResidenceKey last = after;
        lock.lock();
        try {
            Iterator<Map.Entry<ResidenceKey, ResidenceRecord>> it = tail(after, false).entrySet().iterator();
            while (it.hasNext()) {
                if (examined++ >= examineMax) {
                    return new ScanBatch(out, last, false, bytes, false);
                }
                Map.Entry<ResidenceKey, ResidenceRecord> e = it.next();
                Namespace ns = e.getKey().key().namespace();
                if (!scope.contains(ns)) {
                    last = e.getKey();
                    Namespace next = nextInScope(scope, ns);
                    if (next == null) {
                        return new ScanBatch(out, last, true, bytes, false);
                    }
                    it = tail(ResidenceKey.firstOf(next), true).entrySet().iterator();
                    continue;
                }
                long b = Journal.entryBytes(e.getValue());
                if ((!out.isEmpty() || !firstOfPage) && bytes + b > bytesMax) {
                    return new ScanBatch(out, last, false, bytes, true);
                }
                out.add(e.getValue());
                bytes += b;
                last = e.getKey();
                if (out.size() == recordsMax) {
                    return new ScanBatch(out, last, !it.hasNext(), bytes, false);
                }
            }
            return new ScanBatch(out, last, true, bytes, false);
        } finally {
            lock.unlock();
        }
    }

    private NavigableMap<ResidenceKey, ResidenceRecord> tail(ResidenceKey from, boolean inclusive) {
        return from == null ? resident : resident.tailMap(from, inclusive);
    }

    /** The least subscribed namespace above {@code ns}, or null (AllNamespaces contains every namespace). */
    private static Namespace nextInScope(Scope scope, Namespace ns) {
        if (!(scope instanceof Scope.NamespaceList list)) {
            return null;
        }
        int i = java.util.Collections.binarySearch(list.namespaces(), ns);
        int next = i >= 0 ? i + 1 : -i - 1;
        return next < list.namespaces().size() ? list.namespaces().get(next) : null;
    }

    /** Under the lock: the head (S1 capture, SNAP-3). */
    long lockedHead() {
        lock.lock();
        try {
            return journal.head();
        } finally {
            lock.unlock();
        }
    }

    ReadOutcome readThrough(long fromExclusive, long through, Scope scope, int intervalsMax) {
        return partitioner.read(fromExclusive, through, scope, intervalsMax);
    }

    /** Copies under the lock; null when {@code fromExclusive} is no longer retained. */
    private final class LockedCopier implements IntervalPartitioner.JournalCopier {
        @Override
        public ResidenceRecord[] copyAfter(long fromExclusive, long through, int max) {
            lock.lock();
            try {
                if (fromExclusive < journal.oldestRetained() - 1) {
                    return null;
                }
                return journal.copyAfter(fromExclusive, through, max);
            } finally {
                lock.unlock();
            }
        }

        @Override
        public long oldestRetained() {
            return SourceInventory.this.oldestRetainedSequence();
        }
    }
}
