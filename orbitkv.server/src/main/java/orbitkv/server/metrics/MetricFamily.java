package orbitkv.server.metrics;

import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.ToDoubleFunction;

/**
 * One metric family as data (issue 34 item 2; DIAG-2): its name, help, type, label names, and the extractor that
 * reads its samples from a status snapshot {@code S}. A family never reaches into a live object: {@link ManagerMetrics}
 * takes one snapshot per scrape and hands it to every family of its part. Labels are bounded enumerations only.
 *
 * @param name the family name (a counter's {@code _total} suffix is added by the exposition format)
 * @param help one line
 * @param type counter, gauge or classic histogram
 * @param labelNames every sample's label names, in order
 * @param extractor writes the family's samples of one snapshot
 */
public record MetricFamily<S>(String name, String help, Type type, List<String> labelNames,
                              BiConsumer<S, Samples> extractor) {
    public enum Type { COUNTER, GAUGE, HISTOGRAM }

    /** Where an extractor writes; each sample carries exactly one value per label name. */
    public interface Samples {
        /** One counter or gauge sample. */
        void value(double value, String... labelValues);

        /** One classic histogram sample: per-bucket counts for {@code upperBounds} (the last +Inf), and the sum. */
        void histogram(double[] upperBounds, long[] counts, double sum, String... labelValues);
    }

    public MetricFamily {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(help, "help");
        Objects.requireNonNull(type, "type");
        labelNames = List.copyOf(labelNames);
        Objects.requireNonNull(extractor, "extractor");
    }

    /** A counter with labels. */
    public static <S> MetricFamily<S> counter(String name, String help, List<String> labels, BiConsumer<S, Samples> extractor) {
        return new MetricFamily<>(name, help, Type.COUNTER, labels, extractor);
    }

    /** A counter of one unlabelled value. */
    public static <S> MetricFamily<S> counter(String name, String help, ToDoubleFunction<S> value) {
        return counter(name, help, List.of(), (s, out) -> out.value(value.applyAsDouble(s)));
    }

    /** A gauge with labels. */
    public static <S> MetricFamily<S> gauge(String name, String help, List<String> labels, BiConsumer<S, Samples> extractor) {
        return new MetricFamily<>(name, help, Type.GAUGE, labels, extractor);
    }

    /** A gauge of one unlabelled value. */
    public static <S> MetricFamily<S> gauge(String name, String help, ToDoubleFunction<S> value) {
        return gauge(name, help, List.of(), (s, out) -> out.value(value.applyAsDouble(s)));
    }

    /** A classic histogram with labels. */
    public static <S> MetricFamily<S> histogram(String name, String help, List<String> labels, BiConsumer<S, Samples> extractor) {
        return new MetricFamily<>(name, help, Type.HISTOGRAM, labels, extractor);
    }

    /** The same family over a larger snapshot {@code R} of which {@code part} picks this family's snapshot. */
    public <R> MetricFamily<R> over(java.util.function.Function<R, S> part) {
        return new MetricFamily<>(name, help, type, labelNames, (r, out) -> extractor.accept(part.apply(r), out));
    }

    /** A histogram sample of a {@link orbitkv.inventory.SecondsHistogram} with no labels. */
    static void seconds(Samples out, orbitkv.inventory.SecondsHistogram h) {
        out.histogram(h.upperBoundsSeconds(), h.counts(), h.sumSeconds());
    }

    /** This family's Prometheus snapshot of {@code status}; a sample of the wrong type or label count fails naming the family. */
    MetricSnapshot snapshot(S status) {
        Collected c = new Collected();
        extractor.accept(status, c);
        return switch (type) {
            case COUNTER -> {
                CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(help);
                c.values.forEach(v -> b.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                        .value(v.value()).labels(v.labels()).build()));
                yield b.build();
            }
            case GAUGE -> {
                GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(help);
                c.values.forEach(v -> b.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                        .value(v.value()).labels(v.labels()).build()));
                yield b.build();
            }
            case HISTOGRAM -> {
                HistogramSnapshot.Builder b = HistogramSnapshot.builder().name(name).help(help);
                c.histograms.forEach(b::dataPoint);
                yield b.build();
            }
        };
    }

    private record Value(double value, Labels labels) {}

    private final class Collected implements Samples {
        final List<Value> values = new ArrayList<>();
        final List<HistogramSnapshot.HistogramDataPointSnapshot> histograms = new ArrayList<>();

        @Override
        public void value(double value, String... labelValues) {
            if (type == Type.HISTOGRAM) {
                throw new IllegalStateException(name + " is a histogram: a sample needs buckets");
            }
            values.add(new Value(value, labels(labelValues)));
        }

        @Override
        public void histogram(double[] upperBounds, long[] counts, double sum, String... labelValues) {
            if (type != Type.HISTOGRAM) {
                throw new IllegalStateException(name + " is a " + type + ", not a histogram");
            }
            histograms.add(HistogramSnapshot.HistogramDataPointSnapshot.builder().labels(labels(labelValues))
                    .classicHistogramBuckets(ClassicHistogramBuckets.of(upperBounds, counts)).sum(sum).build());
        }

        private Labels labels(String[] values) {
            if (values.length != labelNames.size()) {
                throw new IllegalStateException(name + " has labels " + labelNames + ", got " + values.length + " value(s)");
            }
            return values.length == 0 ? Labels.EMPTY : Labels.of(labelNames, List.of(values));
        }
    }
}
