package orbitkv.inventory;

import java.util.UUID;
import orbitkv.membership.Incarnation;

/**
 * One source-side session (DIAG-1): its position and its credit ledger (SES-13).
 *
 * @param requester the requester incarnation
 * @param sessionId the random session id of the Open (SES-6)
 * @param phase bootstrap or streaming
 * @param cursor the journal cursor the source has sent through
 * @param lastFrame the last frame number sent (SES-12)
 * @param outstandingBytes ledgered bytes not yet acknowledged
 * @param peakOutstandingBytes highest outstanding bytes seen
 * @param creditReturnedBytes bytes returned by ACKs so far
 * @param duplicateAcks ACKs at or below the acknowledged frame (counted, ignored)
 * @param sessionMismatchDrops frames with another session id (dropped, SES-6)
 * @param snapshotAttempts snapshot attempts started in this session (SNAP-1; more than one means retries)
 * @param snapshotAborts attempts aborted because the journal trimmed past S0 and retried after backoff
 *        (SNAP-4); during degraded discovery (SNAP-13) this grows while no view installs
 */
public record SourceSessionStatus(Incarnation requester, UUID sessionId, Phase phase, long cursor, long lastFrame,
        long outstandingBytes, long peakOutstandingBytes, long creditReturnedBytes, long duplicateAcks,
        long sessionMismatchDrops, long snapshotAttempts, long snapshotAborts) {
    /** Where the session's pump is. */
    public enum Phase {
        OPENING,
        BOOTSTRAPPING,
        STREAMING,
        CLOSED
    }
}
