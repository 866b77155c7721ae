package orbitkv.recovery;

import java.util.List;
import java.util.Objects;

/**
 * The planner's answer for one demand (IDX-14, ROUTE-1..ROUTE-6): the routes that cover the recoverable
 * prefix, why the prefix stops, and why these routes were chosen.
 *
 * @param fromIndex the demand index planning started at (0, or the index a replan resumed from)
 * @param routes routes in demand order, abutting, covering exactly {@code [fromIndex, prefixEnd)}
 * @param prefixEnd the demand index just past the recoverable prefix; the prefix is {@code [0, prefixEnd)}
 * @param stop why the prefix ends there ({@link PrefixStop#COMPLETE} when it covers the demand)
 * @param eligibleSources distinct sources with an eligible replica of some key in the prefix
 * @param decision the choice and its explanation
 */
public record Plan(int fromIndex, List<Route> routes, int prefixEnd, PrefixStop stop, int eligibleSources, Decision decision) {
    public Plan {
        Objects.requireNonNull(stop, "stop");
        Objects.requireNonNull(decision, "decision");
        routes = List.copyOf(routes);
        int at = fromIndex;
        for (Route r : routes) {
            if (r.fromIndex() != at) {
                throw new IllegalArgumentException("routes must abut in demand order: expected index " + at + ", got " + r.fromIndex());
            }
            at = r.toIndex();
        }
        if (at != prefixEnd) {
            throw new IllegalArgumentException("routes end at " + at + " but the prefix ends at " + prefixEnd);
        }
        if (fromIndex < 0 || eligibleSources < 0) {
            throw new IllegalArgumentException("fromIndex and eligibleSources must be >= 0");
        }
    }

    /** Keys in the planned prefix, from the demand's first key. */
    public int prefixKeys() {
        return prefixEnd;
    }

    /** Payload bytes of all routes. */
    public long bytes() {
        long b = 0;
        for (Route r : routes) {
            b += r.bytes();
        }
        return b;
    }
}
