package orbitkv.recovery;

import java.util.Comparator;
import java.util.Objects;
import orbitkv.inventory.Medium;
import orbitkv.membership.Incarnation;

/**
 * Where a route reads from: this Manager's own tier, or one peer incarnation's tier (ROUTE-2).
 *
 * <p>{@link #ORDER} is the fixed policy's deterministic source order: local before peer, DRAM before SSD
 * (the {@link RouteKind} order), then owner node id, node epoch and incarnation id. It never depends on the
 * order in which evidence listed the replicas.
 */
public sealed interface RouteSource {
    Medium medium();

    RouteKind kind();

    /** Local tiers, then peers by (node id, epoch, incarnation id), each DRAM before SSD as {@link RouteKind} orders them. */
    Comparator<RouteSource> ORDER = Comparator.comparing(RouteSource::kind)
            .thenComparing(s -> s instanceof Peer p ? p.owner() : null,
                    Comparator.nullsFirst(Comparator.comparing((Incarnation i) -> i.nodeId())
                            .thenComparing(Incarnation::epoch).thenComparing(Incarnation::id)));

    /** This Manager's tier. */
    record Local(Medium medium) implements RouteSource {
        public Local {
            Objects.requireNonNull(medium, "medium");
        }

        @Override
        public RouteKind kind() {
            return RouteKind.of(true, medium);
        }
    }

    /** A peer incarnation's tier. */
    record Peer(Incarnation owner, Medium medium) implements RouteSource {
        public Peer {
            Objects.requireNonNull(owner, "owner");
            Objects.requireNonNull(medium, "medium");
        }

        @Override
        public RouteKind kind() {
            return RouteKind.of(false, medium);
        }
    }
}
