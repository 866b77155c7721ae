package orbitkv.recovery.plan;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import orbitkv.inventory.StateKey;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.Route;
import orbitkv.recovery.RouteBlock;
import orbitkv.recovery.RouteSource;

/**
 * Request-local rejected evidence (ROUTE-7): what refusals of this request excluded from its replans. It lives and
 * dies with one request; the shared index and the shared cost model are never edited through it. Bounded by the
 * demand: at most one entry per (source, demanded key) and one per source.
 */
public final class Exclusions {
    private Set<RouteSource> sources = Set.of(); // allocated on the first refusal: most requests have none
    private Set<Replica> replicas = Set.of();

    private record Replica(RouteSource source, StateKey key) {}

    /** Records what {@code refusal} of {@code route} excludes; {@code refusedKeys} empty = every key of the route. */
    public void add(Route route, AdmissionRefusal refusal, List<StateKey> refusedKeys) {
        switch (refusal.scope()) {
            case SOURCE -> {
                if (sources.isEmpty()) {
                    sources = new HashSet<>();
                }
                sources.add(route.source());
            }
            case KEYS -> {
                if (replicas.isEmpty()) {
                    replicas = new HashSet<>();
                }
                if (refusedKeys.isEmpty()) {
                    for (RouteBlock b : route.blocks()) {
                        replicas.add(new Replica(route.source(), b.key()));
                    }
                } else {
                    for (StateKey k : refusedKeys) {
                        replicas.add(new Replica(route.source(), k));
                    }
                }
            }
            case NONE -> {
                // receive credits: nothing about the source is learned
            }
        }
    }

    boolean excludes(RouteSource source, StateKey key) {
        return (!sources.isEmpty() && sources.contains(source)) || (!replicas.isEmpty() && replicas.contains(new Replica(source, key)));
    }

    boolean isEmpty() {
        return sources.isEmpty() && replicas.isEmpty();
    }
}
