package orbitkv.recovery;

import java.util.List;
import java.util.Map;

/**
 * A snapshot of {@link NodeAdmission} for the status page and metrics (DIAG-1/DIAG-2: bounded, no labels per lease or
 * submitter).
 *
 * @param lanes every lane, ordered by NIC then direction
 * @param chargedByKind bytes charged now, by submitter kind (all lanes)
 * @param refusals refusals since start, by reason
 * @param submitters registered submitters (live and lost)
 * @param lostSubmitters submitters declared lost and not yet terminated
 * @param leases outstanding leases
 * @param pending waiting requests
 * @param expiredLeases leases that expired with bytes outstanding, since start
 */
public record AdmissionStatus(List<LaneStatus> lanes, Map<SubmitterKind, Long> chargedByKind,
        Map<CreditRefusal, Long> refusals, int submitters, int lostSubmitters, int leases, int pending,
        long expiredLeases) {
    public AdmissionStatus {
        lanes = List.copyOf(lanes);
        chargedByKind = Map.copyOf(chargedByKind);
        refusals = Map.copyOf(refusals);
    }

    /**
     * One lane.
     *
     * @param usableBytes the window minus the reserve
     * @param chargedBytes outstanding leased bytes, every submitter kind
     * @param quarantinedBytes the part of {@code chargedBytes} held by expired leases or lost submitters
     * @param peakBytes high-water mark of {@code chargedBytes}
     * @param usablePaceBytesPerSecond the pacer's rate (0: unpaced)
     * @param pending requests waiting on this lane
     * @param grantedBytesTotal bytes granted since start
     */
    public record LaneStatus(NicLane lane, long windowBytesMax, long usableBytes, long chargedBytes,
            long quarantinedBytes, long peakBytes, long usablePaceBytesPerSecond, int pending, long grantedBytesTotal) {}
}
