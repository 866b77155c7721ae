package orbitkv.inventory.source;

import java.util.Objects;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceOrder;
import orbitkv.inventory.StateKey;

/** The resident-map key {@code (StateKey, medium)} in resident-map order (DESIGN §4, SNAP-2). */
record ResidenceKey(StateKey key, Medium medium) implements Comparable<ResidenceKey> {
    private static final byte[] SMALLEST_KEY = {0};

    ResidenceKey {
        Objects.requireNonNull(key, "key must not be null");
        Objects.requireNonNull(medium, "medium must not be null");
    }

    /** The smallest residence key of {@code namespace}: keys are 1..64 bytes, so {@code [0x00]} is the least. */
    static ResidenceKey firstOf(Namespace namespace) {
        return new ResidenceKey(new StateKey(namespace, SMALLEST_KEY), Medium.DRAM);
    }

    @Override
    public int compareTo(ResidenceKey o) {
        return ResidenceOrder.compare(key, medium, o.key, o.medium);
    }
}
