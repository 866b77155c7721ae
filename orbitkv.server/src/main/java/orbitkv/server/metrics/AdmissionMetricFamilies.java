package orbitkv.server.metrics;

import static orbitkv.server.metrics.MetricFamily.counter;
import static orbitkv.server.metrics.MetricFamily.gauge;

import java.util.List;
import orbitkv.recovery.AdmissionStatus;

/**
 * The node-local admission window (issue 39; ROUTE-11, DIAG-2) as data over one {@link AdmissionStatus} per scrape:
 * per NIC lane (nic and direction: bounded by {@code --admission-nics}) the window, charged and quarantined bytes and
 * granted bytes; charged bytes by submitter kind; refusals by reason. No label per submitter, lease or request.
 */
public final class AdmissionMetricFamilies {
    private static final List<String> LANE = List.of("nic", "direction");

    /** Every family of the admission window, read from one {@link AdmissionStatus} per scrape. */
    public static final List<MetricFamily<AdmissionStatus>> FAMILIES = List.of(
            gauge("orbitkv_admission_window_bytes", "usable in-flight bytes per NIC lane (window minus reserve)", LANE,
                    (s, out) -> s.lanes().forEach(l -> out.value(l.usableBytes(), l.lane().nic(), l.lane().direction().wireName()))),
            gauge("orbitkv_admission_charged_bytes", "bytes charged per NIC lane (Manager READs, egress and engine WRITEs)", LANE,
                    (s, out) -> s.lanes().forEach(l -> out.value(l.chargedBytes(), l.lane().nic(), l.lane().direction().wireName()))),
            gauge("orbitkv_admission_quarantined_bytes", "charged bytes of expired leases or lost submitters, held until evidence",
                    LANE, (s, out) -> s.lanes().forEach(l -> out.value(l.quarantinedBytes(), l.lane().nic(),
                            l.lane().direction().wireName()))),
            counter("orbitkv_admission_granted_bytes", "bytes granted per NIC lane since start", LANE,
                    (s, out) -> s.lanes().forEach(l -> out.value(l.grantedBytesTotal(), l.lane().nic(),
                            l.lane().direction().wireName()))),
            gauge("orbitkv_admission_charged_by_kind_bytes",
                    "bytes charged now by submitter kind (manager-read, manager-egress, engine-write)", List.of("kind"),
                    (s, out) -> s.chargedByKind().forEach((k, v) -> out.value(v, k.wireName()))),
            counter("orbitkv_admission_refusals", "admission refusals by reason", List.of("reason"),
                    (s, out) -> s.refusals().forEach((r, n) -> out.value(n, r.wireName()))),
            gauge("orbitkv_admission_pending", "credit requests waiting in the queue", AdmissionStatus::pending));

    private AdmissionMetricFamilies() {}
}
