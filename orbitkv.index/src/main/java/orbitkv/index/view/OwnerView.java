package orbitkv.index.view;

import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import orbitkv.index.OwnerState;
import orbitkv.index.OwnerViewStatus;
import orbitkv.index.SnapshotProgress;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.Interval;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.RejectReason;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.membership.Incarnation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything the index knows about one source incarnation: at most one installed view and one staging
 * view (DESIGN §6), an explicit state machine, receipt age and source head.
 *
 * <p>Concurrency: receiver calls are serialized by this object's monitor (the apply mutex). Frames arrive
 * already prepared, so the monitor only guards bookkeeping; the installed rows are swapped or mutated under
 * the write half of {@link #rowsLock}, which lookups take for reading, so a reader sees each frame entirely
 * or not at all (DELTA-2). Growth copies and staging work happen outside the write lock.
 */
final class OwnerView {
    private static final Logger LOG = LoggerFactory.getLogger(OwnerView.class);
    private static final Map<OwnerState, Set<OwnerState>> EDGES = new EnumMap<>(OwnerState.class);

    static {
        EDGES.put(OwnerState.AWAITING, EnumSet.of(OwnerState.BOOTSTRAPPING, OwnerState.REMOVED));
        EDGES.put(OwnerState.BOOTSTRAPPING,
                EnumSet.of(OwnerState.INSTALLED, OwnerState.AWAITING, OwnerState.WITHDRAWN, OwnerState.REMOVED));
        EDGES.put(OwnerState.INSTALLED, EnumSet.of(OwnerState.REPAIRING, OwnerState.WITHDRAWN, OwnerState.REMOVED));
        EDGES.put(OwnerState.REPAIRING, EnumSet.of(OwnerState.INSTALLED, OwnerState.BOOTSTRAPPING,
                OwnerState.WITHDRAWN, OwnerState.REMOVED));
        EDGES.put(OwnerState.WITHDRAWN, EnumSet.of(OwnerState.BOOTSTRAPPING, OwnerState.REMOVED));
        EDGES.put(OwnerState.REMOVED, EnumSet.noneOf(OwnerState.class));
    }

    final Incarnation owner;
    private final IndexContext ctx;
    private final ReentrantReadWriteLock rowsLock = new ReentrantReadWriteLock();

    /** Written under the write lock; read by lookups under the read lock. */
    private ResidenceTable installed;
    private UUID viewId;
    private ScopeDigest viewDigest;
    private long watermark = -1;
    private long installedBytes;
    private StagingView staging;
    private ResetCause lastResetCause;

    private volatile OwnerState state = OwnerState.AWAITING;
    private volatile boolean excluded;
    private volatile long lastReceiptNanos;
    private volatile boolean everReceived;
    private volatile long sourceHead = -1;
    private volatile long installedMonoNanos = -1;
    private volatile long installedSequence = -1;

    OwnerView(Incarnation owner, IndexContext ctx) {
        this.owner = owner;
        this.ctx = ctx;
    }

    OwnerState state() {
        return state;
    }

    boolean excluded() {
        return excluded;
    }

    long lastReceiptNanos() {
        return lastReceiptNanos;
    }

    ReentrantReadWriteLock.ReadLock readLock() {
        return rowsLock.readLock();
    }

    /** The installed table; call only while holding {@link #readLock()}. */
    ResidenceTable installedTableUnderReadLock() {
        return installed;
    }

    /** Throws naming the edge unless {@code from -> to} is an edge of the owner state machine. */
    static void requireEdge(OwnerState from, OwnerState to) {
        if (!EDGES.get(from).contains(to)) {
            throw new IllegalStateException("owner view state machine: illegal edge " + from + " -> " + to);
        }
    }

    /** The single transition method of the owner state machine; a self-edge is a no-op. */
    private void transition(OwnerState to) {
        OwnerState from = state;
        if (from == to) {
            return;
        }
        requireEdge(from, to);
        state = to;
        ctx.coverage().stateChanged(this, from, to);
    }

    private void receipt() {
        lastReceiptNanos = ctx.monoNanos().getAsLong();
        everReceived = true;
        ctx.coverage().receipt(this);
    }

    // ---------------------------------------------------------------- snapshot (SNAP-1..SNAP-10)

    /** SNAP-1: begin (or restart) a staging attempt at S0. */
    synchronized StageOutcome beginStaging(UUID id, ScopeDigest digest, long s0, long frameNumber) {
        if (excluded) {
            return new StageOutcome.Rejected(RejectReason.UNKNOWN_SOURCE_INCARNATION);
        }
        receipt();
        if (!digest.equals(ctx.scopeDigest())) {
            return new StageOutcome.Rejected(RejectReason.SCOPE_DIGEST_MISMATCH);
        }
        if (id.equals(viewId)) {
            return new StageOutcome.Rejected(RejectReason.VIEW_UNKNOWN);
        }
        dropStaging();
        staging = new StagingView(id, s0, frameNumber, TranscriptDigest.builder().begin(frameNumber, id, digest, s0));
        transition(installed != null ? OwnerState.REPAIRING : OwnerState.BOOTSTRAPPING);
        return new StageOutcome.Staged(0);
    }

    /** SNAP-2/SNAP-9: one page, applied by version into staging. */
    synchronized StageOutcome stagePage(UUID id, long pageOrdinal, long frameNumber, PreparedFrame frame,
            RecordBatch records) {
        if (excluded) {
            return new StageOutcome.Rejected(RejectReason.UNKNOWN_SOURCE_INCARNATION);
        }
        receipt();
        StagingView s = staging;
        if (s == null || !s.viewId.equals(id)) {
            return new StageOutcome.Rejected(RejectReason.VIEW_UNKNOWN);
        }
        if (frame.rejected() != null) {
            return new StageOutcome.Rejected(frame.rejected());
        }
        if (s.replayStarted || pageOrdinal != s.pagesStaged + 1 || frameNumber <= s.lastFrame) {
            return new StageOutcome.Rejected(RejectReason.FRAME_OUT_OF_ORDER);
        }
        if (s.lastPageRecord != null && frame.first() != null
                && PreparedFrame.compareResidence(s.lastPageRecord, frame.first()) >= 0) {
            return new StageOutcome.Rejected(RejectReason.MALFORMED_FRAME);
        }
        RejectReason r = stagePageRows(s, frame);
        if (r != null) {
            return new StageOutcome.Rejected(r);
        }
        s.pagesStaged = pageOrdinal;
        s.lastFrame = frameNumber;
        if (frame.last() != null) {
            s.lastPageRecord = frame.last();
        }
        s.maxScannedSequence = Math.max(s.maxScannedSequence, frame.maxSequence());
        s.transcript.page(frameNumber, pageOrdinal, records);
        return new StageOutcome.Staged(s.rows());
    }

    /**
     * Stages a page's rows without probing for them (the table is built later, see {@link StagingView#table()}).
     * Sound because pages come before
     * any replay (checked by the caller) and every page row is strictly after every row staged so far in
     * (StateKey, medium) order (checked by the caller and by {@link PreparedFrame#page}), so none of them
     * can be present yet; the by-version rules of {@link #stageByVersion} only matter once replay starts.
     *
     * @return null when staged, else the refusal (BUDGET_EXCEEDED discards staging)
     */
    private RejectReason stagePageRows(StagingView s, PreparedFrame frame) {
        long bytes = 0;
        for (int i = 0; i < frame.rows(); i++) {
            bytes += RowCost.bytes(frame.key(i).length);
        }
        if (!reserveStaging(s, bytes)) {
            return RejectReason.BUDGET_EXCEEDED;
        }
        s.appendPage(frame);
        return null;
    }

    /** Reserves staging bytes; when they cannot fit even after withdrawing the old view, staging is withdrawn. */
    private boolean reserveStaging(StagingView s, long bytes) {
        if (!reserveForReplacement(bytes)) {
            LOG.warn("owner {} staging view {} refused: it cannot fit the index budget even alone", owner, s.viewId);
            dropStaging();
            lastResetCause = ResetCause.BUDGET_EXCEEDED;
            ctx.viewsWithdrawn().incrementAndGet();
            transition(OwnerState.WITHDRAWN);
            return false;
        }
        s.chargedBytes += bytes;
        return true;
    }

    /**
     * Applies a frame to staging by version (SNAP-3, SNAP-9): a higher residency sequence wins, tombstones
     * stay until commit, a same-generation disagreement is refused (DELTA-5) before anything changes.
     *
     * @return null when applied, else the refusal (staging unchanged, except BUDGET_EXCEEDED discards it)
     */
    private RejectReason stageByVersion(StagingView s, PreparedFrame frame) {
        int inserts = 0;
        long bytes = 0;
        ResidenceTable table = s.table();
        for (int i = 0; i < frame.rows(); i++) {
            int slot = table.find(frame.tag(i), frame.key(i), frame.hash(i));
            if (slot < 0) {
                inserts++;
                bytes += RowCost.bytes(frame.key(i).length);
            } else if (table.sequenceAt(slot) == frame.sequence(i) && table.sizeAt(slot) != frame.size(i)) {
                return RejectReason.CONFLICTING_RECORD;
            }
        }
        if (!reserveStaging(s, bytes)) {
            return RejectReason.BUDGET_EXCEEDED;
        }
        if (table.needsGrowth(inserts)) {
            table = table.grownCopy(inserts);
            s.replaceTable(table);
        }
        for (int i = 0; i < frame.rows(); i++) {
            int slot = table.find(frame.tag(i), frame.key(i), frame.hash(i));
            if (slot < 0) {
                table.insert(frame.tag(i), frame.key(i), frame.hash(i), frame.sequence(i), frame.size(i));
            } else if (frame.sequence(i) > table.sequenceAt(slot)) {
                table.overwrite(slot, frame.sequence(i), frame.size(i));
            }
            s.deletesStaged |= frame.isDelete(i);
        }
        return null;
    }

    /**
     * Reserves staging bytes; if they cannot fit, withdraws the old installed view first and tries once
     * more (SNAP-12: charged together, withdraw rather than evict random rows).
     */
    private boolean reserveForReplacement(long bytes) {
        if (ctx.budget().tryReserve(bytes)) {
            return true;
        }
        if (installed == null) {
            return false;
        }
        withdrawInstalled();
        return ctx.budget().tryReserve(bytes);
    }

    /** SNAP-5/SNAP-7: validate the marker against what was staged, then install at S1 in one transition. */
    synchronized CommitOutcome commit(UUID id, CommitMarker marker) {
        if (excluded) {
            return new CommitOutcome.Rejected(RejectReason.UNKNOWN_SOURCE_INCARNATION);
        }
        receipt();
        StagingView s = staging;
        if (s == null || !s.viewId.equals(id)) {
            return new CommitOutcome.Rejected(RejectReason.VIEW_UNKNOWN);
        }
        RejectReason invalid = validateCommit(s, marker);
        if (invalid != null) {
            dropStaging();
            lastResetCause = ResetCause.COMMIT_REJECTED;
            transition(installed != null ? OwnerState.REPAIRING : OwnerState.AWAITING);
            return new CommitOutcome.Rejected(invalid);
        }
        ResidenceTable staged = s.table();
        // Pages are puts only (SNAP-2): without a staged delete there is no tombstone to look for.
        long freed = s.deletesStaged ? staged.removeTombstones() : 0;
        ctx.budget().release(freed);
        long newBytes = s.chargedBytes - freed;
        staging = null;
        long t0 = ctx.monoNanos().getAsLong();
        rowsLock.writeLock().lock();
        IndexLockScope.entered();
        try {
            installed = staged;
            ctx.budget().release(installedBytes);
            installedBytes = newBytes;
            viewId = s.viewId;
            viewDigest = ctx.scopeDigest();
            watermark = marker.s1();
            transition(OwnerState.INSTALLED);
            ctx.coverage().viewChanged();
            installedSequence = marker.s1();
            installedMonoNanos = ctx.monoNanos().getAsLong();
        } finally {
            IndexLockScope.left();
            rowsLock.writeLock().unlock();
            ctx.applyHold().record(ctx.monoNanos().getAsLong() - t0);
        }
        return new CommitOutcome.Installed(s.viewId, marker.s1(), staged.size());
    }

    private static RejectReason validateCommit(StagingView s, CommitMarker m) {
        if (m.pageCount() != s.pagesStaged || m.firstFrame() != s.beginFrame || m.lastFrame() != s.lastFrame
                || m.s1() < s.s0 || s.replayCursor != m.s1() || m.maxScannedSequence() != s.maxScannedSequence) {
            return RejectReason.COMMIT_INCOMPLETE;
        }
        if (!s.transcript.finish().equals(m.transcriptDigest())) {
            return RejectReason.TRANSCRIPT_DIGEST_MISMATCH;
        }
        return null;
    }

    /** SNAP-10: discard staging; the installed view (if any) stays as stale hints. */
    synchronized void discardStaging(ResetCause cause) {
        if (excluded) {
            return;
        }
        lastResetCause = cause;
        if (staging != null) {
            dropStaging();
            if (state == OwnerState.BOOTSTRAPPING) {
                transition(OwnerState.AWAITING);
            }
        }
    }

    private void dropStaging() {
        if (staging != null) {
            ctx.budget().release(staging.chargedBytes);
            staging = null;
        }
    }

    /** SNAP-12: free the installed rows of this owner; nothing else is evicted. */
    private void withdrawInstalled() {
        long t0 = ctx.monoNanos().getAsLong();
        rowsLock.writeLock().lock();
        IndexLockScope.entered();
        try {
            installed = null;
        } finally {
            IndexLockScope.left();
            rowsLock.writeLock().unlock();
            ctx.applyHold().record(ctx.monoNanos().getAsLong() - t0);
        }
        ctx.budget().release(installedBytes);
        LOG.warn("owner {} view {} at {} withdrawn: it cannot fit the index budget ({} bytes freed)", owner, viewId,
                watermark, installedBytes);
        installedBytes = 0;
        viewId = null;
        viewDigest = null;
        watermark = -1;
        lastResetCause = ResetCause.BUDGET_EXCEEDED;
        ctx.viewsWithdrawn().incrementAndGet();
        transition(staging != null ? OwnerState.BOOTSTRAPPING : OwnerState.WITHDRAWN);
        ctx.coverage().viewChanged();
    }

    // ---------------------------------------------------------------- deltas (DELTA-1..DELTA-9, SNAP-6)

    synchronized DeltaOutcome applyDelta(UUID id, long frameNumber, Interval interval, PreparedFrame frame,
            RecordBatch records) {
        if (excluded) {
            return new DeltaOutcome.Rejected(RejectReason.UNKNOWN_SOURCE_INCARNATION);
        }
        receipt();
        boolean toStaging = staging != null && staging.viewId.equals(id);
        if (!toStaging && (installed == null || !id.equals(viewId))) {
            return new DeltaOutcome.Rejected(RejectReason.VIEW_UNKNOWN);
        }
        if (frame.rejected() != null) {
            return new DeltaOutcome.Rejected(frame.rejected());
        }
        long a = toStaging ? staging.replayCursor : watermark;
        DeltaOutcome rule = IntervalRule.classify(a, interval);
        if (rule != null) {
            if (rule instanceof DeltaOutcome.NeedRepair && !toStaging && state == OwnerState.INSTALLED) {
                transition(OwnerState.REPAIRING);
            }
            return rule;
        }
        return toStaging ? applyToStaging(frameNumber, interval, frame, records) : applyToInstalled(interval, frame);
    }

    private DeltaOutcome applyToStaging(long frameNumber, Interval interval, PreparedFrame frame,
            RecordBatch records) {
        StagingView s = staging;
        if (frameNumber <= s.lastFrame) {
            return new DeltaOutcome.Rejected(RejectReason.FRAME_OUT_OF_ORDER);
        }
        RejectReason r = stageByVersion(s, frame);
        if (r != null) {
            return new DeltaOutcome.Rejected(r);
        }
        s.replayStarted = true;
        s.replayCursor = interval.to();
        s.lastFrame = frameNumber;
        s.transcript.replay(frameNumber, interval, records);
        return new DeltaOutcome.Applied(interval.to());
    }

    /** DELTA-2: validate, reserve the frame's accounting, then apply records and cursor atomically. */
    private DeltaOutcome applyToInstalled(Interval interval, PreparedFrame frame) {
        ResidenceTable table = installed;
        int inserts = 0;
        long reserve = 0;
        long release = 0;
        for (int i = 0; i < frame.rows(); i++) {
            int slot = table.find(frame.tag(i), frame.key(i), frame.hash(i));
            if (slot < 0) {
                if (!frame.isDelete(i)) {
                    inserts++;
                    reserve += RowCost.bytes(frame.key(i).length);
                }
            } else if (table.sequenceAt(slot) == frame.sequence(i) && table.sizeAt(slot) != frame.size(i)) {
                return new DeltaOutcome.Rejected(RejectReason.CONFLICTING_RECORD);
            } else if (frame.isDelete(i)) {
                release += RowCost.bytes(frame.key(i).length);
            }
        }
        if (!ctx.budget().tryReserve(reserve)) {
            withdrawInstalled();
            return new DeltaOutcome.Rejected(RejectReason.BUDGET_EXCEEDED);
        }
        ResidenceTable target = table.needsGrowth(inserts) ? table.grownCopy(inserts) : table;
        long t0 = ctx.monoNanos().getAsLong();
        rowsLock.writeLock().lock();
        IndexLockScope.entered();
        try {
            installed = target;
            for (int i = 0; i < frame.rows(); i++) {
                int slot = target.find(frame.tag(i), frame.key(i), frame.hash(i));
                if (frame.isDelete(i)) {
                    if (slot >= 0) {
                        target.removeAt(slot);
                    }
                } else if (slot < 0) {
                    target.insert(frame.tag(i), frame.key(i), frame.hash(i), frame.sequence(i), frame.size(i));
                } else {
                    target.overwrite(slot, frame.sequence(i), frame.size(i));
                }
            }
            watermark = interval.to();
            installedBytes += reserve - release;
            ctx.budget().release(release);
            if (state == OwnerState.REPAIRING && staging == null) {
                transition(OwnerState.INSTALLED);
            }
            ctx.coverage().viewChanged();
            if (frame.rows() > 0) {
                // PERF-1: stamped after rows, coverage and accounting are committed, still under the lock;
                // record-less progress does not rewrite the installation time of the last records.
                installedSequence = interval.to();
                installedMonoNanos = ctx.monoNanos().getAsLong();
            }
        } finally {
            IndexLockScope.left();
            rowsLock.writeLock().unlock();
            ctx.applyHold().record(ctx.monoNanos().getAsLong() - t0);
        }
        return new DeltaOutcome.Applied(interval.to());
    }

    // ---------------------------------------------------------------- liveness, resume, removal

    synchronized Optional<InstalledCursor> installedCursor() {
        return installed == null || excluded ? Optional.empty() : Optional.of(new InstalledCursor(viewId, watermark));
    }

    /** IDX-11: head advertisement; records receipt age, never advances a cursor (DELTA-11). */
    void observeLiveness(long head) {
        if (head < 0) {
            throw new IllegalArgumentException("liveness source head must be >= 0, got " + head);
        }
        sourceHead = head;
        receipt();
    }

    /**
     * IDX-1/IDX-13: exclude this incarnation at once (lookups check {@link #excluded()}, O(1)) and hand
     * its installed rows to bounded asynchronous cleanup. Staging is freed immediately.
     *
     * @return the rows to clean (charged until cleaned), or null
     */
    synchronized RetiredRows exclude() {
        if (excluded) {
            return null;
        }
        excluded = true;
        OwnerState before = state;
        dropStaging();
        lastResetCause = ResetCause.MEMBER_REMOVED;
        ResidenceTable rows;
        rowsLock.writeLock().lock();
        IndexLockScope.entered();
        try {
            rows = installed;
            installed = null;
        } finally {
            IndexLockScope.left();
            rowsLock.writeLock().unlock();
        }
        ctx.coverage().exclude(this, before);
        transition(OwnerState.REMOVED);
        long bytes = installedBytes;
        installedBytes = 0;
        return rows == null ? null : new RetiredRows(owner, rows, bytes);
    }

    synchronized OwnerViewStatus status(long nowNanos) {
        StagingView s = staging;
        long rows;
        rowsLock.readLock().lock();
        try {
            rows = installed == null ? 0 : installed.size();
        } finally {
            rowsLock.readLock().unlock();
        }
        long age = everReceived ? Math.max(0, (nowNanos - lastReceiptNanos) / 1_000_000) : -1;
        return new OwnerViewStatus(owner, state, Optional.ofNullable(viewId), Optional.ofNullable(viewDigest),
                watermark, sourceHead, age, rows, installedBytes + (s == null ? 0 : s.chargedBytes),
                installedSequence, installedMonoNanos, Optional.ofNullable(lastResetCause),
                s == null ? Optional.empty()
                        : Optional.of(new SnapshotProgress(s.s0, s.pagesStaged, s.rows(), s.replayCursor)));
    }
}
