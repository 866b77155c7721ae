package orbitkv.server.http;

import io.prometheus.metrics.core.metrics.Metric;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The session metrics of both ends as one family per name (DIAG-3). The source end and the requester end
 * each own a set of metrics with the same names (the {@code side} label separates their data points where
 * both count); a Prometheus registry refuses the second set, so this collector merges them at scrape
 * time: data points with distinct labels are listed, equal label sets are combined (counters summed,
 * gauges at their maximum, histograms: the one with observations, since each histogram is observed by one
 * end only). Nothing is dropped or renamed.
 */
final class SessionMetricsUnion implements MultiCollector {
    private final List<Metric> metrics;

    SessionMetricsUnion(List<Metric> sourceEnd, List<Metric> requesterEnd) {
        List<Metric> all = new ArrayList<>(sourceEnd);
        all.addAll(requesterEnd);
        this.metrics = List.copyOf(all);
    }

    @Override
    public MetricSnapshots collect() {
        Map<String, List<MetricSnapshot>> byName = new LinkedHashMap<>();
        for (Metric m : metrics) {
            MetricSnapshot s = m.collect();
            byName.computeIfAbsent(s.getMetadata().getPrometheusName(), k -> new ArrayList<>()).add(s);
        }
        MetricSnapshots.Builder out = MetricSnapshots.builder();
        byName.values().forEach(group -> out.metricSnapshot(merge(group)));
        return out.build();
    }

    private static MetricSnapshot merge(List<MetricSnapshot> group) {
        MetricSnapshot first = group.getFirst();
        if (group.size() == 1) {
            return first;
        }
        return switch (first) {
            case CounterSnapshot c -> new CounterSnapshot(c.getMetadata(), combine(group, CounterDataPointSnapshot.class,
                    (x, y) -> new CounterDataPointSnapshot(x.getValue() + y.getValue(), x.getLabels(), null,
                            Math.min(x.getCreatedTimestampMillis(), y.getCreatedTimestampMillis()))));
            case GaugeSnapshot g -> new GaugeSnapshot(g.getMetadata(), combine(group, GaugeDataPointSnapshot.class,
                    (x, y) -> x.getValue() >= y.getValue() ? x : y));
            case HistogramSnapshot h -> new HistogramSnapshot(h.isGaugeHistogram(), h.getMetadata(),
                    combine(group, HistogramDataPointSnapshot.class, (x, y) -> x.getCount() >= y.getCount() ? x : y));
            default -> throw new IllegalStateException("session metric " + first.getMetadata().getName()
                    + " has a type this union does not merge: " + first.getClass().getSimpleName());
        };
    }

    private static <P extends DataPointSnapshot> List<P> combine(List<MetricSnapshot> group, Class<P> type,
                                                                  java.util.function.BinaryOperator<P> same) {
        Map<Labels, P> points = new LinkedHashMap<>();
        for (MetricSnapshot s : group) {
            for (DataPointSnapshot p : s.getDataPoints()) {
                points.merge(p.getLabels(), type.cast(p), same);
            }
        }
        return List.copyOf(points.values());
    }
}
