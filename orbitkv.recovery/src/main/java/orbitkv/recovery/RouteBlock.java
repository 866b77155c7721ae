package orbitkv.recovery;

import java.util.Objects;
import orbitkv.inventory.StateKey;

/**
 * One demanded key inside a route, with the exact generation the source must still hold (INV-2, INV-3).
 *
 * @param key the key
 * @param sequence the residency sequence the evidence named
 * @param sizeBytes its payload size
 * @param stale the evidence was a stale hint (only when the demand allows them)
 */
public record RouteBlock(StateKey key, long sequence, long sizeBytes, boolean stale) {
    public RouteBlock {
        Objects.requireNonNull(key, "key");
        if (sequence < 1 || sizeBytes < 0) {
            throw new IllegalArgumentException("route block sequence must be >= 1 and size >= 0");
        }
    }
}
