package orbitkv.server.metrics;

import static orbitkv.server.metrics.MetricFamily.counter;
import static orbitkv.server.metrics.MetricFamily.gauge;

import java.util.List;
import java.util.Map;
import orbitkv.recovery.RouteKind;
import orbitkv.recovery.RouteMetrics;

/**
 * The recovery planner's families as data over its plain snapshot ({@link RouteMetrics}; issue 14 item 7, DIAG-2):
 * routes by kind and outcome, admission refusals and replans by reason, first-plan decisions, restores by final stop,
 * routes still draining. Every label value is a closed enum's trace name.
 */
public final class RouteMetricFamilies {
    /** Every family of the planner, read from one {@link RouteMetrics} per scrape. */
    public static final List<MetricFamily<RouteMetrics>> FAMILIES = List.of(
            counter("orbitkv_route_plans", "planner calls (queries and restores)", RouteMetrics::plans),
            counter("orbitkv_route_routes", "restore routes by kind (local-dram, local-ssd, peer-dram, peer-ssd) and outcome "
                    + "(executed, ready, payload_failure, timed_out, refused)", List.of("kind", "outcome"), (m, out) -> {
                        for (Map.Entry<RouteKind, RouteMetrics.KindCounts> e : m.byKind().entrySet()) {
                            String k = e.getKey().traceName();
                            RouteMetrics.KindCounts c = e.getValue();
                            out.value(c.executed(), k, "executed");
                            out.value(c.ready(), k, "ready");
                            out.value(c.payloadFailures(), k, "payload_failure");
                            out.value(c.timedOut(), k, "timed_out");
                            out.value(c.refused(), k, "refused");
                        }
                    }),
            counter("orbitkv_route_ready_bytes", "payload bytes delivered host-ready, by route kind", List.of("kind"),
                    (m, out) -> m.byKind().forEach((k, c) -> out.value(c.bytesReady(), k.traceName()))),
            counter("orbitkv_route_refusals", "admission refusals before submission, by reason", List.of("reason"),
                    (m, out) -> m.refusals().forEach((r, n) -> out.value(n, r.traceName()))),
            counter("orbitkv_route_replans", "replans, by the refusal that caused them", List.of("reason"),
                    (m, out) -> m.replans().forEach((r, n) -> out.value(n, r.traceName()))),
            counter("orbitkv_route_decisions", "first-plan decisions, by reason", List.of("reason"),
                    (m, out) -> m.decisions().forEach((r, n) -> out.value(n, r.traceName()))),
            counter("orbitkv_route_restore_stops", "restores, by the stop of their prefix", List.of("stop"),
                    (m, out) -> m.stops().forEach((s, n) -> out.value(n, s.traceName()))),
            gauge("orbitkv_route_drain_pending",
                    "submitted routes whose READ has not physically drained (they keep grants and credits)",
                    RouteMetrics::drainPending));

    private RouteMetricFamilies() {}
}
