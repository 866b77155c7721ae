package orbitkv.server.metrics;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.Map;
import java.util.function.Supplier;
import orbitkv.recovery.RouteKind;
import orbitkv.recovery.RouteMetrics;

/**
 * Adapts the recovery planner's plain snapshot ({@link RouteMetrics}) to Prometheus families read at scrape time
 * (issue 14 item 7; DIAG-2): routes by kind and outcome, admission refusals and replans by reason, first-plan
 * decisions, restores by final stop, routes still draining. Every label value is a closed enum's trace name.
 */
public final class RouteMetricFamilies {
    private RouteMetricFamilies() {}

    public static void register(PrometheusRegistry registry, Supplier<RouteMetrics> metrics) {
        CounterWithCallback.builder().name("orbitkv_route_plans").help("planner calls (queries and restores)")
                .callback(cb -> cb.call(metrics.get().plans())).register(registry);
        CounterWithCallback.builder().name("orbitkv_route_routes")
                .help("restore routes by kind (local-dram, local-ssd, peer-dram, peer-ssd) and outcome "
                        + "(executed, ready, payload_failure, timed_out, refused)")
                .labelNames("kind", "outcome").callback(cb -> {
                    for (Map.Entry<RouteKind, RouteMetrics.KindCounts> e : metrics.get().byKind().entrySet()) {
                        String k = e.getKey().traceName();
                        RouteMetrics.KindCounts c = e.getValue();
                        cb.call(c.executed(), k, "executed");
                        cb.call(c.ready(), k, "ready");
                        cb.call(c.payloadFailures(), k, "payload_failure");
                        cb.call(c.timedOut(), k, "timed_out");
                        cb.call(c.refused(), k, "refused");
                    }
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_route_ready_bytes").help("payload bytes delivered host-ready, by route kind")
                .labelNames("kind").callback(cb -> metrics.get().byKind()
                        .forEach((k, c) -> cb.call(c.bytesReady(), k.traceName()))).register(registry);
        CounterWithCallback.builder().name("orbitkv_route_refusals").help("admission refusals before submission, by reason")
                .labelNames("reason").callback(cb -> metrics.get().refusals()
                        .forEach((r, n) -> cb.call(n, r.traceName()))).register(registry);
        CounterWithCallback.builder().name("orbitkv_route_replans").help("replans, by the refusal that caused them")
                .labelNames("reason").callback(cb -> metrics.get().replans()
                        .forEach((r, n) -> cb.call(n, r.traceName()))).register(registry);
        CounterWithCallback.builder().name("orbitkv_route_decisions").help("first-plan decisions, by reason")
                .labelNames("reason").callback(cb -> metrics.get().decisions()
                        .forEach((r, n) -> cb.call(n, r.traceName()))).register(registry);
        CounterWithCallback.builder().name("orbitkv_route_restore_stops").help("restores, by the stop of their prefix")
                .labelNames("stop").callback(cb -> metrics.get().stops()
                        .forEach((s, n) -> cb.call(n, s.traceName()))).register(registry);
        GaugeWithCallback.builder().name("orbitkv_route_drain_pending")
                .help("submitted routes whose READ has not physically drained (they keep grants and credits)")
                .callback(cb -> cb.call(metrics.get().drainPending())).register(registry);
    }
}
