package orbitkv.recovery;

import java.util.List;
import java.util.Objects;

/**
 * The result of one executed restore: the delivered routes (a prefix of the demand, in order), why it ends there,
 * and its trace.
 *
 * @param delivered host-ready routes in demand order; their destinations now belong to the caller
 * @param restoredKeys keys delivered ({@code delivered}'s blocks)
 * @param stop why the restored prefix ends
 * @param trace the bounded trace
 * @param <D> the Manager's destination type
 */
public record Restore<D>(List<Delivered<D>> delivered, int restoredKeys, PrefixStop stop, RouteTrace trace) {
    public Restore {
        delivered = List.copyOf(delivered);
        Objects.requireNonNull(stop, "stop");
        Objects.requireNonNull(trace, "trace");
        int at = 0;
        for (Delivered<D> d : delivered) {
            if (d.route().fromIndex() != at) {
                throw new IllegalArgumentException("delivered routes must form a prefix in demand order");
            }
            at = d.route().toIndex();
        }
        if (at != restoredKeys) {
            throw new IllegalArgumentException("restoredKeys " + restoredKeys + " != delivered keys " + at);
        }
    }

    /** One delivered route and the destination holding its verified bytes. */
    public record Delivered<D>(Route route, D destination) {
        public Delivered {
            Objects.requireNonNull(route, "route");
            Objects.requireNonNull(destination, "destination");
        }
    }
}
