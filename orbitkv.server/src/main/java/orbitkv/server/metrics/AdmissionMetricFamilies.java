package orbitkv.server.metrics;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.function.Supplier;
import orbitkv.recovery.AdmissionStatus;

/**
 * The node-local admission window (issue 39; ROUTE-11, DIAG-2) at scrape time: per NIC lane (nic and direction:
 * bounded by {@code --admission-nics}) the window, charged and quarantined bytes and granted bytes; charged bytes by
 * submitter kind; refusals by reason. No label per submitter, lease or request.
 */
public final class AdmissionMetricFamilies {
    private AdmissionMetricFamilies() {}

    public static void register(PrometheusRegistry registry, Supplier<AdmissionStatus> status) {
        GaugeWithCallback.builder().name("orbitkv_admission_window_bytes")
                .help("usable in-flight bytes per NIC lane (window minus reserve)").labelNames("nic", "direction")
                .callback(cb -> status.get().lanes().forEach(l -> cb.call(l.usableBytes(), l.lane().nic(),
                        l.lane().direction().wireName()))).register(registry);
        GaugeWithCallback.builder().name("orbitkv_admission_charged_bytes")
                .help("bytes charged per NIC lane (Manager READs, egress and engine WRITEs)").labelNames("nic", "direction")
                .callback(cb -> status.get().lanes().forEach(l -> cb.call(l.chargedBytes(), l.lane().nic(),
                        l.lane().direction().wireName()))).register(registry);
        GaugeWithCallback.builder().name("orbitkv_admission_quarantined_bytes")
                .help("charged bytes of expired leases or lost submitters, held until evidence").labelNames("nic", "direction")
                .callback(cb -> status.get().lanes().forEach(l -> cb.call(l.quarantinedBytes(), l.lane().nic(),
                        l.lane().direction().wireName()))).register(registry);
        CounterWithCallback.builder().name("orbitkv_admission_granted_bytes")
                .help("bytes granted per NIC lane since start").labelNames("nic", "direction")
                .callback(cb -> status.get().lanes().forEach(l -> cb.call(l.grantedBytesTotal(), l.lane().nic(),
                        l.lane().direction().wireName()))).register(registry);
        GaugeWithCallback.builder().name("orbitkv_admission_charged_by_kind_bytes")
                .help("bytes charged now by submitter kind (manager-read, manager-egress, engine-write)").labelNames("kind")
                .callback(cb -> status.get().chargedByKind().forEach((k, v) -> cb.call(v, k.wireName()))).register(registry);
        CounterWithCallback.builder().name("orbitkv_admission_refusals").help("admission refusals by reason")
                .labelNames("reason").callback(cb -> status.get().refusals()
                        .forEach((r, n) -> cb.call(n, r.wireName()))).register(registry);
        GaugeWithCallback.builder().name("orbitkv_admission_pending").help("credit requests waiting in the queue")
                .callback(cb -> cb.call(status.get().pending())).register(registry);
    }
}
