package orbitkv.recovery;

import java.util.List;
import java.util.Objects;

/**
 * One span of a plan: contiguous demanded keys read from one source in one authorization and one READ
 * (ROUTE-2, ROUTE-4). A plan's routes are in demand order and abut; a split between two routes lies only where
 * the source's owner or medium changes.
 *
 * @param source the one source of every block
 * @param fromIndex the demand index of the first block
 * @param blocks the blocks, in demand order ({@code fromIndex + i} is block i's demand index)
 */
public record Route(RouteSource source, int fromIndex, List<RouteBlock> blocks) {
    public Route {
        Objects.requireNonNull(source, "route source must not be null");
        blocks = List.copyOf(blocks);
        if (fromIndex < 0 || blocks.isEmpty() || fromIndex + blocks.size() > Demand.KEYS_MAX) {
            throw new IllegalArgumentException("route must cover 1.." + Demand.KEYS_MAX + " demand keys from index >= 0, got "
                    + blocks.size() + " from " + fromIndex);
        }
    }

    public RouteKind kind() {
        return source.kind();
    }

    /** The demand index just past the last block. */
    public int toIndex() {
        return fromIndex + blocks.size();
    }

    /** Payload bytes of the route. */
    public long bytes() {
        long b = 0;
        for (RouteBlock x : blocks) {
            b += x.sizeBytes();
        }
        return b;
    }

    /** The cost-model class this route's observations belong to. */
    public RouteClass routeClass() {
        return RouteClass.of(source);
    }
}
