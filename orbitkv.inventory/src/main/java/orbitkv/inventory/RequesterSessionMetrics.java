package orbitkv.inventory;

import java.util.Map;
import java.util.Objects;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;

/**
 * The requester end's session figures since its subscriber started (DIAG-3), summed over its sessions: a
 * plain snapshot for the owner of the metrics registry to expose (the Manager adapts it to Prometheus).
 * Counts are monotonic across snapshots; only kinds and causes that occurred appear in the maps. Bounded by
 * construction: keyed by the wire's frame kinds, {@code ErrorCause} and {@link ResetCause}, never by key,
 * peer or session.
 *
 * @param framesSent requester frames sent, by body kind (ACKs included)
 * @param framesReceived source frames received, by body kind
 * @param encodedBytes encoded bytes of the source frames received
 * @param decodedBytes decoded record bytes of the deltas received (SES-10)
 * @param rejections sessions this end closed, by wire cause
 * @param resets staging views discarded, by cause (SNAP-4, SNAP-7, SNAP-10)
 * @param sessionMismatchDrops frames carrying another session id, dropped (SES-6)
 * @param bootstrapSeconds SnapshotBegin receipt until the view installed
 */
public record RequesterSessionMetrics(
        Map<RequesterFrame.BodyCase, Long> framesSent,
        Map<SourceFrame.BodyCase, Long> framesReceived,
        long encodedBytes,
        long decodedBytes,
        Map<ErrorCause, Long> rejections,
        Map<ResetCause, Long> resets,
        long sessionMismatchDrops,
        SecondsHistogram bootstrapSeconds) {
    public RequesterSessionMetrics {
        framesSent = Counts.copy("framesSent", RequesterFrame.BodyCase.class, framesSent);
        framesReceived = Counts.copy("framesReceived", SourceFrame.BodyCase.class, framesReceived);
        rejections = Counts.copy("rejections", ErrorCause.class, rejections);
        resets = Counts.copy("resets", ResetCause.class, resets);
        Counts.nonNegative("encodedBytes", encodedBytes);
        Counts.nonNegative("decodedBytes", decodedBytes);
        Counts.nonNegative("sessionMismatchDrops", sessionMismatchDrops);
        Objects.requireNonNull(bootstrapSeconds, "bootstrapSeconds");
    }

    /** Sessions closed with {@code cause}, 0 if none. */
    public long rejected(ErrorCause cause) {
        return rejections.getOrDefault(cause, 0L);
    }

    /** Staging resets for {@code cause}, 0 if none. */
    public long reset(ResetCause cause) {
        return resets.getOrDefault(cause, 0L);
    }
}
