package orbitkv.inventory.source;

import java.util.ArrayList;
import java.util.List;
import orbitkv.inventory.CoalescedInterval;
import orbitkv.inventory.ReadOutcome;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SnapshotScan;

/**
 * One source-side snapshot attempt (SNAP-1..SNAP-4, SNAP-9); see {@link SnapshotScan}. Pages are filled
 * from bounded {@link SourceInventory#scanBatch} lock holds; the lock is never held between pages or
 * batches. S1 is captured under the lock when a scan step finds no further in-scope record, i.e. after
 * the last page. Replay is read through the same partitioner and coalescer as deltas.
 */
final class SnapshotPager implements SnapshotScan {
    /** States of the attempt and the one transition method. */
    enum State {
        SCANNING, REPLAYING, DONE, ABORTED;

        State to(State next) {
            boolean legal = switch (this) {
                case SCANNING -> next == REPLAYING || next == ABORTED;
                case REPLAYING -> next == DONE || next == ABORTED;
                case DONE, ABORTED -> false;
            };
            if (!legal) {
                throw new IllegalStateException("snapshot scan cannot go from " + this + " to " + next);
            }
            return next;
        }
    }

    private final SourceInventory source;
    private final Scope scope;
    private final long s0;
    private State state = State.SCANNING;
    private ResidenceKey cursor;
    private boolean exhausted;
    private long pages;
    private long scannedRecords;
    private long maxScannedSequence;
    private long s1 = -1;
    private long replayCursor;

    SnapshotPager(SourceInventory source, Scope scope, long s0) {
        this.source = source;
        this.scope = scope;
        this.s0 = s0;
        this.replayCursor = s0;
    }

    @Override
    public Scope scope() {
        return scope;
    }

    @Override
    public long s0() {
        return s0;
    }

    State state() {
        return state;
    }

    @Override
    public ScanStep nextPage() {
        requireState(State.SCANNING, "nextPage");
        long oldest = source.oldestRetainedSequence();
        if (oldest - 1 > s0) {
            state = state.to(State.ABORTED);
            return new ScanStep.Aborted(SnapshotAbortCause.SNAPSHOT_ABORTED_TRIMMED,
                    "replay needs (" + s0 + ", …] but the oldest retained sequence is " + oldest);
        }
        int recordsMax = source.config().pageRecordsMax();
        long bytesMax = source.config().pageBytesMax();
        List<ResidenceRecord> page = new ArrayList<>();
        long bytes = 0;
        while (!exhausted && page.size() < recordsMax) {
            SourceInventory.ScanBatch batch = source.scanBatch(cursor, scope, recordsMax - page.size(), bytesMax - bytes, 2 * recordsMax,
                    page.isEmpty());
            page.addAll(batch.records());
            bytes += batch.bytes();
            cursor = batch.last();
            exhausted = batch.exhausted();
            if (batch.stoppedByBytes()) {
                break;
            }
        }
        if (!page.isEmpty()) {
            pages++;
            scannedRecords += page.size();
            for (ResidenceRecord r : page) {
                maxScannedSequence = Math.max(maxScannedSequence, r.sequence());
            }
            return new ScanStep.Page(pages, page, bytes);
        }
        s1 = source.lockedHead();
        state = state.to(State.REPLAYING);
        return new ScanStep.ScanEnd(s1, pages, maxScannedSequence, scannedRecords);
    }

    @Override
    public ReplayStep nextReplay(int intervalsMax) {
        requireState(State.REPLAYING, "nextReplay");
        if (intervalsMax < 1) {
            throw new IllegalArgumentException("replay intervalsMax must be >= 1, got " + intervalsMax);
        }
        ReadOutcome outcome = source.readThrough(replayCursor, s1, scope, intervalsMax);
        return switch (outcome) {
            case ReadOutcome.Intervals iv -> {
                List<CoalescedInterval> intervals = iv.intervals();
                replayCursor = iv.endCursor(replayCursor);
                boolean complete = replayCursor == s1;
                if (complete) {
                    state = state.to(State.DONE);
                }
                yield new ReplayStep.Replay(intervals, complete);
            }
            case ReadOutcome.Trimmed t -> {
                state = state.to(State.ABORTED);
                yield new ReplayStep.Aborted(SnapshotAbortCause.SNAPSHOT_ABORTED_TRIMMED,
                        "replay needs (" + t.fromExclusive() + ", " + s1 + "] but the oldest retained sequence is " + t.oldestRetainedSequence());
            }
            case ReadOutcome.RecordTooLarge r -> {
                state = state.to(State.ABORTED);
                yield new ReplayStep.Aborted(SnapshotAbortCause.RECORD_TOO_LARGE,
                        "replay record " + r.sequence() + " is " + r.bytes() + " bytes over " + r.bound() + " " + r.boundBytes());
            }
            case ReadOutcome.BeyondHead b -> throw new IllegalStateException("replay cursor beyond head: " + b);
        };
    }

    private void requireState(State expected, String step) {
        if (state != expected) {
            throw new IllegalStateException("snapshot scan " + step + " needs state " + expected + ", is " + state);
        }
    }
}
