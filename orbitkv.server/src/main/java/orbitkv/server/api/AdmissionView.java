package orbitkv.server.api;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import orbitkv.recovery.AdmissionStatus;
import orbitkv.recovery.NicLane;
import orbitkv.server.admission.NodeAdmissionService;

/**
 * The {@code admission} part of {@code /cache/metadata/status} (issue 39; ROUTE-11, DIAG-2): every NIC lane, charged
 * bytes by submitter kind, refusals by reason and the submitter, lease and queue counts. Null in the status when the
 * window is off ({@code --admission-disabled}).
 */
public record AdmissionView(List<LaneView> lanes, Map<String, Long> chargedBytesByKind, Map<String, Long> refusals,
                            int submitters, int lostSubmitters, int leases, int pending, long expiredLeases,
                            String managerReadLane) {
    public AdmissionView {
        lanes = List.copyOf(lanes);
        chargedBytesByKind = Map.copyOf(chargedBytesByKind);
        refusals = Map.copyOf(refusals);
    }

    /** The view of one service's current status. */
    public static AdmissionView of(NodeAdmissionService s) {
        AdmissionStatus st = s.status();
        Map<String, Long> kinds = new TreeMap<>();
        st.chargedByKind().forEach((k, v) -> kinds.put(k.wireName(), v));
        Map<String, Long> refusals = new TreeMap<>();
        st.refusals().forEach((k, v) -> refusals.put(k.wireName(), v));
        return new AdmissionView(st.lanes().stream().map(LaneView::of).toList(), kinds, refusals, st.submitters(),
                st.lostSubmitters(), st.leases(), st.pending(), st.expiredLeases(),
                s.managerReadLane().map(NicLane::toString).orElse(null));
    }

    /** One lane: its window, usable, charged, quarantined and peak bytes, pace, queue and granted bytes since start. */
    public record LaneView(String nic, String direction, long windowBytesMax, long usableBytes, long chargedBytes,
                           long quarantinedBytes, long peakBytes, long paceBytesPerSecond, int pending, long grantedBytesTotal) {
        static LaneView of(AdmissionStatus.LaneStatus l) {
            return new LaneView(l.lane().nic(), l.lane().direction().wireName(), l.windowBytesMax(), l.usableBytes(),
                    l.chargedBytes(), l.quarantinedBytes(), l.peakBytes(), l.usablePaceBytesPerSecond(), l.pending(),
                    l.grantedBytesTotal());
        }
    }
}
