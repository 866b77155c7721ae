package orbitkv.transfer;

import java.util.Map;
import java.util.Objects;

/**
 * A snapshot of a source's grants, pins, refusals and egress (plain numbers; every map is keyed by a closed
 * enum and lists every constant).
 *
 * @param grantsOutstanding grants not yet ended
 * @param pinsHeld pins held for grants (ended grants whose payload is still being sent included)
 * @param pinnedBytesHeld payload bytes of those pins
 * @param prefetchPinnedBytesHeld the share of {@code pinnedBytesHeld} held for prefetch grants
 * @param grantsIssued grants issued since start
 * @param grantsEnded grants ended, by cause
 * @param refusals Authorize refusals since start, by reason (request-level once per request, block-level once
 *     per block)
 * @param dataRefusals READ requests the data listener refused, by reason
 * @param readsServed blocks sent completely, by route class
 * @param bytesServed payload bytes sent completely, by route class
 * @param egressInFlightBytes payload bytes handed to data connections and not yet written out
 * @param dataConnections open data connections
 * @param sendsCut sends whose data connection the source closed because their grant ended (expiry, exclusion,
 *     fence, close; a released grant's send still draining at the grant's expiry counts as expired), by that end
 * @param dataConnectionRefusals data connections closed as soon as they were accepted, by bound
 * @param dataConnectionTimeouts data connections closed by a deadline (partial request, idle), by deadline
 * @param dataReadPauses times a data connection stopped reading its socket (backpressure), by cause
 * @param dataAcceptFailures failed accepts on the data listener
 */
public record TransferSourceStatus(long grantsOutstanding, long pinsHeld, long pinnedBytesHeld,
        long prefetchPinnedBytesHeld, long grantsIssued, Map<GrantEnd, Long> grantsEnded,
        Map<RefusalReason, Long> refusals, Map<DataRefusal, Long> dataRefusals, Map<PeerRouteClass, Long> readsServed,
        Map<PeerRouteClass, Long> bytesServed, long egressInFlightBytes, long dataConnections,
        Map<GrantEnd, Long> sendsCut, Map<DataConnectionRefusal, Long> dataConnectionRefusals,
        Map<DataConnectionTimeout, Long> dataConnectionTimeouts, Map<DataReadPause, Long> dataReadPauses,
        long dataAcceptFailures) {
    public TransferSourceStatus {
        grantsEnded = EnumCounts.copy(GrantEnd.class, Objects.requireNonNull(grantsEnded));
        refusals = EnumCounts.copy(RefusalReason.class, Objects.requireNonNull(refusals));
        dataRefusals = EnumCounts.copy(DataRefusal.class, Objects.requireNonNull(dataRefusals));
        readsServed = EnumCounts.copy(PeerRouteClass.class, Objects.requireNonNull(readsServed));
        bytesServed = EnumCounts.copy(PeerRouteClass.class, Objects.requireNonNull(bytesServed));
        sendsCut = EnumCounts.copy(GrantEnd.class, Objects.requireNonNull(sendsCut));
        dataConnectionRefusals = EnumCounts.copy(DataConnectionRefusal.class, Objects.requireNonNull(dataConnectionRefusals));
        dataConnectionTimeouts = EnumCounts.copy(DataConnectionTimeout.class, Objects.requireNonNull(dataConnectionTimeouts));
        dataReadPauses = EnumCounts.copy(DataReadPause.class, Objects.requireNonNull(dataReadPauses));
    }
}
