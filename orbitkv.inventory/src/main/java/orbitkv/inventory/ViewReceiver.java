package orbitkv.inventory;

import java.util.List;
import java.util.Optional;
import java.util.UUID;
import orbitkv.membership.Incarnation;

/**
 * The requester-side sink of an InventorySession (SPI; the GlobalIndex implements it). The session's
 * requester end calls it after it has decoded, bounded and structurally validated a frame, never while
 * holding a lock of its own across I/O (DELTA-4). Per source incarnation the receiver keeps at most one
 * installed view and one hidden staging view (DESIGN §6).
 *
 * <p>Every method refuses with a sealed outcome instead of throwing for expected protocol conditions;
 * a refusal changes no view state. Calls for one source are serialized by the receiver.
 */
public interface ViewReceiver {
    /**
     * SNAP-1: a snapshot of {@code source} begins at S0; replaces any previous staging attempt. The
     * staging replay cursor starts at {@code s0} (SNAP-6).
     */
    StageOutcome beginStaging(Incarnation source, UUID viewId, ScopeDigest scopeDigest, long s0, long frameNumber);

    /**
     * SNAP-2/SNAP-9: page {@code pageOrdinal} (1, 2, ...) of the ordered resident map, records strictly
     * increasing by {@code (StateKey, medium)}, all puts with their real sequences. Applied by version.
     */
    StageOutcome stagePage(Incarnation source, UUID viewId, long pageOrdinal, long frameNumber, RecordBatch records);

    /** {@link #stagePage(Incarnation, UUID, long, long, RecordBatch)} of a record list. */
    default StageOutcome stagePage(Incarnation source, UUID viewId, long pageOrdinal, long frameNumber,
            List<ResidenceRecord> records) {
        return stagePage(source, viewId, pageOrdinal, frameNumber, RecordBatch.of(records));
    }

    /**
     * DELTA-1..9, SNAP-6: a coalesced delta. If {@code viewId} is the staging view it extends the
     * staging replay cursor (apply by version, tombstones kept); if it is the installed view it applies
     * to the installed view under the interval rules.
     */
    DeltaOutcome applyDelta(Incarnation source, UUID viewId, long frameNumber, Interval interval, RecordBatch records);

    /** {@link #applyDelta(Incarnation, UUID, long, Interval, RecordBatch)} of a record list. */
    default DeltaOutcome applyDelta(Incarnation source, UUID viewId, long frameNumber, Interval interval,
            List<ResidenceRecord> records) {
        return applyDelta(source, viewId, frameNumber, interval, RecordBatch.of(records));
    }

    /** SNAP-5/SNAP-7: validate the marker against the staged transcript and install at S1 in one transition. */
    CommitOutcome commit(Incarnation source, UUID viewId, CommitMarker marker);

    /** SNAP-10: the session ended or reset; discard staging. The installed view stays. */
    void discardStaging(Incarnation source, ResetCause cause);

    /** SNAP-8: the installed view id and cursor a new session may resume from, if any. */
    Optional<InstalledCursor> installedCursor(Incarnation source);

    /**
     * IDX-11/IDX-12/DELTA-11: a liveness frame arrived: record the source head and the receipt time.
     * Never advances a cursor.
     */
    void observeLiveness(Incarnation source, long sourceHead);
}
