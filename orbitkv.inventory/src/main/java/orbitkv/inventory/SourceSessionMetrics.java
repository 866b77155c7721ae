package orbitkv.inventory;

import java.util.Map;
import java.util.Objects;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;

/**
 * The source end's session figures since its server started (DIAG-3), summed over its sessions: a plain
 * snapshot for the owner of the metrics registry to expose (the Manager adapts it to Prometheus). Counts
 * are monotonic across snapshots; only kinds and causes that occurred appear in the maps. Bounded by
 * construction: keyed by the wire's frame kinds and {@code ErrorCause}, never by key, peer or session.
 *
 * @param framesSent source frames sent, by body kind (SES-12)
 * @param framesReceived requester frames received, by body kind
 * @param encodedBytes encoded bytes of the frames sent and received
 * @param originalMutations journal positions covered by the deltas and replay sent (PUB-1)
 * @param coalescedRecords records those deltas carried after coalescing (PUB-6)
 * @param snapshotPageBytes encoded bytes of snapshot pages sent (SNAP-2)
 * @param snapshotReplayBytes encoded bytes of bootstrap replay sent (SNAP-3)
 * @param rejections sessions this end closed, by wire cause (SNAPSHOT_ABORTED_TRIMMED counts aborted
 *        snapshot attempts, SNAP-4)
 * @param duplicateAcks ACKs at or below the acknowledged frame, ignored (SES-13)
 * @param sessionMismatchDrops frames carrying another session id, dropped (SES-6)
 * @param ackRoundTripSeconds data frame handed to the transport until its ACK returned (transport and
 *        apply lag, apart from the intentional coalescing wait)
 * @param peakOutstandingCreditBytes highest outstanding credit of any session of this server (SES-13)
 * @param sendYields pump steps that ended early for a session of a higher class (ROUTE-10, issue 39 item 5)
 * @param sendQueueRefusals requests for a send step refused because the bounded send queue was full (ROUTE-10)
 */
public record SourceSessionMetrics(
        Map<SourceFrame.BodyCase, Long> framesSent,
        Map<RequesterFrame.BodyCase, Long> framesReceived,
        long encodedBytes,
        long originalMutations,
        long coalescedRecords,
        long snapshotPageBytes,
        long snapshotReplayBytes,
        Map<ErrorCause, Long> rejections,
        long duplicateAcks,
        long sessionMismatchDrops,
        SecondsHistogram ackRoundTripSeconds,
        long peakOutstandingCreditBytes,
        long sendYields,
        long sendQueueRefusals) {
    public SourceSessionMetrics {
        framesSent = Counts.copy("framesSent", SourceFrame.BodyCase.class, framesSent);
        framesReceived = Counts.copy("framesReceived", RequesterFrame.BodyCase.class, framesReceived);
        rejections = Counts.copy("rejections", ErrorCause.class, rejections);
        Counts.nonNegative("encodedBytes", encodedBytes);
        Counts.nonNegative("originalMutations", originalMutations);
        Counts.nonNegative("coalescedRecords", coalescedRecords);
        Counts.nonNegative("snapshotPageBytes", snapshotPageBytes);
        Counts.nonNegative("snapshotReplayBytes", snapshotReplayBytes);
        Counts.nonNegative("duplicateAcks", duplicateAcks);
        Counts.nonNegative("sessionMismatchDrops", sessionMismatchDrops);
        Objects.requireNonNull(ackRoundTripSeconds, "ackRoundTripSeconds");
        Counts.nonNegative("peakOutstandingCreditBytes", peakOutstandingCreditBytes);
        Counts.nonNegative("sendYields", sendYields);
        Counts.nonNegative("sendQueueRefusals", sendQueueRefusals);
    }

    /** The figures before issue 39 item 5; no send scheduling events. */
    public SourceSessionMetrics(Map<SourceFrame.BodyCase, Long> framesSent, Map<RequesterFrame.BodyCase, Long> framesReceived,
            long encodedBytes, long originalMutations, long coalescedRecords, long snapshotPageBytes, long snapshotReplayBytes,
            Map<ErrorCause, Long> rejections, long duplicateAcks, long sessionMismatchDrops, SecondsHistogram ackRoundTripSeconds,
            long peakOutstandingCreditBytes) {
        this(framesSent, framesReceived, encodedBytes, originalMutations, coalescedRecords, snapshotPageBytes, snapshotReplayBytes,
                rejections, duplicateAcks, sessionMismatchDrops, ackRoundTripSeconds, peakOutstandingCreditBytes, 0, 0);
    }

    /** These figures with the source's send scheduling events (ROUTE-10). */
    public SourceSessionMetrics withSendScheduling(long yields, long queueRefusals) {
        return new SourceSessionMetrics(framesSent, framesReceived, encodedBytes, originalMutations, coalescedRecords,
                snapshotPageBytes, snapshotReplayBytes, rejections, duplicateAcks, sessionMismatchDrops, ackRoundTripSeconds,
                peakOutstandingCreditBytes, yields, queueRefusals);
    }

    /** Frames of {@code kind} sent, 0 if none. */
    public long sent(SourceFrame.BodyCase kind) {
        return framesSent.getOrDefault(kind, 0L);
    }

    /** Sessions closed with {@code cause}, 0 if none. */
    public long rejected(ErrorCause cause) {
        return rejections.getOrDefault(cause, 0L);
    }
}
