package orbitkv.server.metrics;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The Manager's one metrics registry and its status families (issue 34 item 2), created by the Manager core, never by
 * the HTTP adapter. Each part is a status snapshot supplier with its {@link MetricFamily families}; a scrape first
 * takes every part's snapshot once (the scrape's one status snapshot), then lets each family extract its samples from
 * it, so families of one part are consistent with each other and none reads a live object on its own. The HTTP
 * adapter's event counters (requests, errors, connections) join the same {@link #registry()}.
 */
public final class ManagerMetrics {
    /** Families of all parts together; a part that would go beyond is refused naming the bound (INV-9). */
    static final int FAMILIES_MAX = 512;

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final List<Part<?>> parts = new ArrayList<>();
    private final Set<String> names = new HashSet<>();

    private ManagerMetrics() {
        registry.register(new MultiCollector() {
            @Override
            public MetricSnapshots collect() {
                return scrape();
            }

            @Override
            public List<String> getPrometheusNames() {
                synchronized (ManagerMetrics.this) {
                    return List.copyOf(names);
                }
            }
        });
    }

    /** An empty registry; the core adds the planner's and the tiers' parts, the runtime the incarnation's. */
    public static ManagerMetrics create() {
        return new ManagerMetrics();
    }

    /** The registry a scrape writes; event counters of the HTTP adapter register here too. */
    public PrometheusRegistry registry() {
        return registry;
    }

    /**
     * Adds a part: {@code status} is called once per scrape, and each of {@code families} extracts from that one
     * snapshot. A family name already taken, or more than {@value #FAMILIES_MAX} families, is refused and adds nothing.
     */
    public synchronized <S> void add(Supplier<S> status, List<MetricFamily<S>> families) {
        Objects.requireNonNull(status, "status");
        Set<String> added = new HashSet<>();
        for (MetricFamily<S> f : families) {
            if (names.contains(f.name()) || !added.add(f.name())) {
                throw new IllegalArgumentException("metric family " + f.name() + " is already registered");
            }
        }
        if (names.size() + added.size() > FAMILIES_MAX) {
            throw new IllegalArgumentException("metric families would exceed " + FAMILIES_MAX + ": "
                    + names.size() + " registered, " + added.size() + " more");
        }
        names.addAll(added);
        parts.add(new Part<>(status, List.copyOf(families)));
    }

    /**
     * Registers one part on a bare {@code registry} (a part that the HTTP adapter creates when serving, issue 40): each
     * scrape takes {@code status} once and lets each family extract from it, as {@link #add} does.
     */
    public static <S> void register(PrometheusRegistry registry, Supplier<S> status, List<MetricFamily<S>> families) {
        List<MetricFamily<S>> all = List.copyOf(families);
        List<String> names = all.stream().map(MetricFamily::name).toList();
        registry.register(new MultiCollector() {
            @Override
            public MetricSnapshots collect() {
                List<MetricSnapshot> out = new ArrayList<>(all.size());
                new Taken<>(status.get(), all).extract(out);
                return new MetricSnapshots(out);
            }

            @Override
            public List<String> getPrometheusNames() {
                return names;
            }
        });
    }

    /** One scrape: every part's snapshot first, then every family's samples from it. */
    MetricSnapshots scrape() {
        List<Part<?>> all;
        synchronized (this) {
            all = List.copyOf(parts);
        }
        List<Taken<?>> taken = new ArrayList<>(all.size());
        for (Part<?> p : all) {
            taken.add(p.take());
        }
        List<MetricSnapshot> out = new ArrayList<>();
        for (Taken<?> t : taken) {
            t.extract(out);
        }
        return new MetricSnapshots(out);
    }

    private record Part<S>(Supplier<S> status, List<MetricFamily<S>> families) {
        Taken<S> take() {
            return new Taken<>(status.get(), families);
        }
    }

    private record Taken<S>(S status, List<MetricFamily<S>> families) {
        void extract(List<MetricSnapshot> out) {
            for (MetricFamily<S> f : families) {
                out.add(f.snapshot(status));
            }
        }
    }
}
