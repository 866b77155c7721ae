package orbitkv.conformance.baseline;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.conformance.baseline.EtcdTxnPort.BlockOp;
import orbitkv.conformance.baseline.EtcdTxnPort.StoredCursor;
import orbitkv.conformance.baseline.EtcdTxnPort.TxnResult;
import orbitkv.inventory.CoalescedInterval;
import orbitkv.inventory.Interval;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.ReadOutcome;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;

/**
 * The etcd block publisher: the frozen baseline of the ablations (DESIGN §4, PERF-5), never part of a Manager.
 * One etcd key per residence of one owner, written from {@link InventorySource#read} (the exported read API),
 * and a stored cursor advanced by compare-and-swap in every transaction.
 *
 * <ul>
 *   <li><b>Windows</b> (PUB-1): {@link PublisherConfig.Variant#COALESCING} waits for a quiet period of
 *       {@code windowMs} after the latest mutation, at most {@code maxWaitMs} after the first unread one (PUB-5),
 *       then reads coalesced intervals; {@link PublisherConfig.Variant#FROZEN} reads one journal position at a
 *       time (nothing coalesced) and publishes at once, packing consecutive positions into one transaction while
 *       no residence repeats (etcd refuses a key twice in one transaction).</li>
 *   <li><b>Complete windows</b> (PUB-2): the covered cursor moves to a window's input end {@code to} only in the
 *       transaction that carries its last operations; it is never derived from record sequences or the sorted
 *       order of output keys.</li>
 *   <li><b>Multi-transaction windows</b> (PUB-3): a coalesced window larger than one transaction is split into
 *       chunks; each chunk's transaction advances the operation counter by CAS, and every chunk but the last
 *       keeps the previous fully covered cursor.</li>
 *   <li><b>Ambiguous results</b> (PUB-3): after a call without a reply the publisher reads the stored cursor:
 *       the exact cursor it tried to write means committed; the unchanged cursor means not committed and the
 *       identical transaction is replayed (its puts and deletes are idempotent, the CAS admits it once);
 *       anything else is another writer and fences this publisher.</li>
 * </ul>
 *
 * <p>One owner thread drives {@link #publishAvailable()} (tests call it directly; {@link #start()} runs it in a
 * loop). Not thread-safe otherwise.
 */
public final class EtcdBlockPublisher implements AutoCloseable {
    /** Ambiguous results reconciled per transaction before the publisher gives up. */
    static final int RECONCILE_ATTEMPTS_MAX = 16;
    /** Journal positions read per {@link InventorySource#read} call of a coalescing window. */
    static final int INTERVALS_PER_READ = 64;

    private final String owner;
    private final SignalledSource source;
    private final BaselineKeys keys;
    private final PublisherConfig config;
    private final EtcdTxnPort port;
    private final String cursorKey;
    private PublisherCursor cursor;
    private long cursorModRevision;
    private volatile boolean closed;
    private Thread loop;
    private volatile Throwable failure;

    // Counters (DIAG-3 for the baseline): read by harnesses after the run.
    final AtomicLong transactions = new AtomicLong();
    final AtomicLong blockOps = new AtomicLong();
    final AtomicLong windows = new AtomicLong();
    final AtomicLong multiTxnWindows = new AtomicLong();
    final AtomicLong ambiguous = new AtomicLong();
    final AtomicLong replays = new AtomicLong();
    final AtomicLong originalMutations = new AtomicLong();
    final AtomicLong intentionalWaitNanos = new AtomicLong();

    private EtcdBlockPublisher(String owner, SignalledSource source, BaselineKeys keys, PublisherConfig config, EtcdTxnPort port) {
        this.owner = Objects.requireNonNull(owner, "owner");
        this.source = Objects.requireNonNull(source, "source");
        this.keys = Objects.requireNonNull(keys, "keys");
        this.config = Objects.requireNonNull(config, "config");
        this.port = Objects.requireNonNull(port, "port");
        this.cursorKey = keys.cursor(owner);
    }

    /**
     * A publisher for {@code owner} that resumes from the stored cursor (a window left in progress is finished
     * from its next chunk: the journal interval is immutable, so the chunks are recomputed identically).
     */
    public static EtcdBlockPublisher open(String owner, SignalledSource source, BaselineKeys keys, PublisherConfig config,
            EtcdTxnPort port) throws EtcdTxnPort.AmbiguousResult {
        EtcdBlockPublisher p = new EtcdBlockPublisher(owner, source, keys, config, port);
        Optional<StoredCursor> stored = port.readCursor(p.cursorKey);
        p.cursor = stored.map(s -> PublisherCursor.parse(s.value())).orElse(PublisherCursor.INITIAL);
        p.cursorModRevision = stored.map(StoredCursor::modRevision).orElse(0L);
        return p;
    }

    public String owner() {
        return owner;
    }

    public PublisherConfig config() {
        return config;
    }

    /** Transaction attempts so far (committed, refused or ambiguous). */
    public long transactionCount() {
        return transactions.get();
    }

    /** The cursor as this publisher last knows it stored. */
    public PublisherCursor cursor() {
        return cursor;
    }

    /** Publishes everything through the source head as read now; returns the covered cursor. */
    public long publishAvailable() throws EtcdTxnPort.AmbiguousResult, PublisherFenced {
        return publishThrough(source.headSequence());
    }

    /** Publishes every journal position through {@code through} (at most the head). */
    public long publishThrough(long through) throws EtcdTxnPort.AmbiguousResult, PublisherFenced {
        if (cursor.inWindow()) {
            finishWindow(new Interval(cursor.windowFrom(), cursor.windowTo()), cursor.chunksDone());
        }
        while (cursor.covered() < through) {
            if (config.variant() == PublisherConfig.Variant.FROZEN) {
                publishFrozen(through);
            } else {
                publishCoalesced(through);
            }
        }
        return cursor.covered();
    }

    // ------------------------------------------------------------------ frozen: one position at a time

    private void publishFrozen(long through) throws EtcdTxnPort.AmbiguousResult, PublisherFenced {
        long from = cursor.covered();
        long at = from;
        List<BlockOp> ops = new ArrayList<>();
        java.util.Set<String> seen = new java.util.HashSet<>();
        int bytes = 0;
        while (at < through && ops.size() < config.opsPerTxnMax()) {
            CoalescedInterval one = single(read(at, at + 1, 1));
            BlockOp op = one.records().isEmpty() ? null : op(one.records().getFirst());
            if (op != null && (seen.contains(op.key()) || (bytes + op.bytes() > config.txnBytesMax() && !ops.isEmpty()))) {
                break; // the next position starts a new transaction
            }
            if (op != null) {
                ops.add(op);
                seen.add(op.key());
                bytes += op.bytes();
            }
            at = one.interval().to();
        }
        windows.incrementAndGet();
        originalMutations.addAndGet(at - from);
        commit(ops, new PublisherCursor(at, cursor.op() + 1, from, at, 1, 1));
    }

    private static CoalescedInterval single(ReadOutcome r) {
        if (r instanceof ReadOutcome.Intervals i && i.intervals().size() == 1) {
            return i.intervals().getFirst();
        }
        throw new IllegalStateException("one journal position should read as one interval, got " + r);
    }

    // ------------------------------------------------------------------ coalescing windows

    private void publishCoalesced(long through) throws EtcdTxnPort.AmbiguousResult, PublisherFenced {
        ReadOutcome r = read(cursor.covered(), through, INTERVALS_PER_READ);
        if (!(r instanceof ReadOutcome.Intervals list)) {
            throw new IllegalStateException("publisher " + owner + " cannot read from " + cursor.covered() + ": " + r);
        }
        for (CoalescedInterval ci : list.intervals()) {
            windows.incrementAndGet();
            originalMutations.addAndGet(ci.interval().length());
            publishWindow(ci, 0);
        }
    }

    /** Re-reads and finishes a window the stored cursor says is in progress (chunks from {@code nextChunk}). */
    private void finishWindow(Interval window, int nextChunk) throws EtcdTxnPort.AmbiguousResult, PublisherFenced {
        ReadOutcome r = read(window.from(), window.to(), 1);
        if (!(r instanceof ReadOutcome.Intervals list) || list.intervals().size() != 1
                || !list.intervals().getFirst().interval().equals(window)) {
            throw new IllegalStateException("window " + window + " in progress can no longer be read as one interval: " + r);
        }
        publishWindow(list.intervals().getFirst(), nextChunk);
    }

    private void publishWindow(CoalescedInterval ci, int firstChunk) throws EtcdTxnPort.AmbiguousResult, PublisherFenced {
        List<List<BlockOp>> chunks = chunks(ci.records());
        long from = ci.interval().from();
        long to = ci.interval().to();
        if (chunks.size() > 1) {
            multiTxnWindows.incrementAndGet();
        }
        for (int i = firstChunk; i < chunks.size(); i++) {
            boolean last = i == chunks.size() - 1;
            // PUB-3: the previous fully covered cursor (from) stays until the last chunk commits; PUB-2: the covered
            // cursor is the window's input end, never a record's sequence.
            commit(chunks.get(i), new PublisherCursor(last ? to : from, cursor.op() + 1, from, to, i + 1, chunks.size()));
        }
    }

    /** The window's operations in output (sorted key) order, cut by the op and byte bounds; at least one chunk. */
    List<List<BlockOp>> chunks(List<ResidenceRecord> records) {
        List<List<BlockOp>> out = new ArrayList<>();
        List<BlockOp> cur = new ArrayList<>();
        int bytes = 0;
        for (ResidenceRecord r : records) {
            BlockOp op = op(r);
            if (!cur.isEmpty() && (cur.size() == config.opsPerTxnMax() || bytes + op.bytes() > config.txnBytesMax())) {
                out.add(cur);
                cur = new ArrayList<>();
                bytes = 0;
            }
            if (op.bytes() > config.txnBytesMax()) {
                throw new IllegalStateException("one block operation of " + op.bytes() + " bytes exceeds txnBytesMax");
            }
            cur.add(op);
            bytes += op.bytes();
        }
        out.add(cur);
        return out;
    }

    private BlockOp op(ResidenceRecord r) {
        String k = keys.block(owner, r.key(), r.medium());
        return r.isDelete() ? new BlockOp.Delete(k) : new BlockOp.Put(k, r.sequence(), r.sizeBytes());
    }

    private ReadOutcome read(long from, long through, int intervalsMax) {
        return source.read(from, through, Scope.all(), intervalsMax);
    }

    // ------------------------------------------------------------------ CAS and reconciliation

    private void commit(List<BlockOp> ops, PublisherCursor next) throws EtcdTxnPort.AmbiguousResult, PublisherFenced {
        String value = next.encode();
        for (int attempt = 0; attempt < RECONCILE_ATTEMPTS_MAX; attempt++) {
            TxnResult result;
            try {
                transactions.incrementAndGet();
                blockOps.addAndGet(ops.size());
                result = port.commit(cursorKey, cursorModRevision, ops, value);
            } catch (EtcdTxnPort.AmbiguousResult e) {
                ambiguous.incrementAndGet();
                if (reconcile(next)) {
                    return;
                }
                replays.incrementAndGet();
                continue; // not committed: replay the identical transaction
            }
            if (result instanceof TxnResult.Committed c) {
                cursor = next;
                cursorModRevision = c.revision();
                return;
            }
            // CAS failed: an earlier ambiguous attempt may have committed after all; otherwise another writer.
            if (!reconcile(next)) {
                throw new PublisherFenced(owner, cursor, readStored());
            }
            return;
        }
        throw new EtcdTxnPort.AmbiguousResult("publisher " + owner + ": no reconciled outcome after "
                + RECONCILE_ATTEMPTS_MAX + " attempts", null);
    }

    /**
     * After an ambiguous result: true if the stored cursor is exactly {@code next} (committed; adopted), false if it
     * is still the cursor this publisher had (not committed).
     *
     * @throws PublisherFenced if it is anything else
     */
    private boolean reconcile(PublisherCursor next) throws EtcdTxnPort.AmbiguousResult, PublisherFenced {
        Optional<StoredCursor> stored = readStoredWithRetry();
        PublisherCursor now = stored.map(s -> PublisherCursor.parse(s.value())).orElse(PublisherCursor.INITIAL);
        long rev = stored.map(StoredCursor::modRevision).orElse(0L);
        if (now.equals(next)) {
            cursor = next;
            cursorModRevision = rev;
            return true;
        }
        if (now.equals(cursor) && rev == cursorModRevision) {
            return false;
        }
        throw new PublisherFenced(owner, cursor, stored);
    }

    private Optional<StoredCursor> readStored() {
        try {
            return port.readCursor(cursorKey);
        } catch (EtcdTxnPort.AmbiguousResult e) {
            return Optional.empty();
        }
    }

    private Optional<StoredCursor> readStoredWithRetry() throws EtcdTxnPort.AmbiguousResult {
        EtcdTxnPort.AmbiguousResult last = null;
        for (int i = 0; i < RECONCILE_ATTEMPTS_MAX; i++) {
            try {
                return port.readCursor(cursorKey);
            } catch (EtcdTxnPort.AmbiguousResult e) {
                last = e;
            }
        }
        throw last;
    }

    /** Another writer moved this owner's cursor: this publisher stops (one writer per owner). */
    public static final class PublisherFenced extends Exception {
        PublisherFenced(String owner, PublisherCursor expected, Optional<StoredCursor> stored) {
            super("publisher " + owner + " fenced: expected cursor " + expected.encode() + ", stored "
                    + stored.map(StoredCursor::value).orElse("(none)"));
        }
    }

    // ------------------------------------------------------------------ background loop

    /** Runs the publisher on its own thread until {@link #close()}: wait for mutations, apply the window, publish. */
    public void start() {
        loop = Thread.ofPlatform().daemon(true).name("etcd-publisher-" + owner).start(this::run);
    }

    /** The failure that stopped the loop, if any. */
    public Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    private void run() {
        try {
            while (!closed) {
                long head = source.headSequence();
                if (head <= cursor.covered() && !cursor.inWindow()) {
                    if (!source.awaitAbove(cursor.covered(), TimeUnit.MILLISECONDS.toNanos(50))) {
                        continue; // re-check closed
                    }
                }
                long through = awaitWindow();
                publishThrough(through);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Throwable t) {
            failure = t;
        }
    }

    /**
     * The coalescing window (PUB-5): after the first unread mutation, wait until no mutation arrived for
     * {@code windowMs}, never longer than {@code maxWaitMs}; returns the head to read through. The frozen publisher
     * and a zero window read at once.
     */
    private long awaitWindow() throws InterruptedException {
        long head = source.headSequence();
        if (config.variant() == PublisherConfig.Variant.FROZEN || config.maxWaitMs() == 0) {
            return head;
        }
        long opened = System.nanoTime();
        long cap = opened + TimeUnit.MILLISECONDS.toNanos(config.maxWaitMs());
        long quiet = TimeUnit.MILLISECONDS.toNanos(config.windowMs());
        while (!closed) {
            long now = System.nanoTime();
            long until = Math.min(cap, now + quiet);
            if (until - now <= 0) {
                break;
            }
            boolean advanced = source.awaitAbove(head, until - now);
            long h = source.headSequence();
            if (h == head && !advanced) {
                break; // a quiet period without a mutation
            }
            head = h;
            if (System.nanoTime() - cap >= 0) {
                break;
            }
        }
        intentionalWaitNanos.addAndGet(System.nanoTime() - opened);
        return source.headSequence();
    }

    @Override
    public void close() {
        closed = true;
        if (loop != null) {
            try {
                loop.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
