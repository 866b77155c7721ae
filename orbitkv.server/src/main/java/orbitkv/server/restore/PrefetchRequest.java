package orbitkv.server.restore;

import java.util.List;
import java.util.Objects;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;

/**
 * One declared demand (HTTP API v1's {@code POST /cache/prefetch}, ROUTE-13), already validated: the namespace, the
 * keys in chain order (distinct) that the caller expects to restore, and the deadline after which a key not yet
 * fetched is dropped ({@code expired}).
 */
public record PrefetchRequest(Namespace namespace, List<StateKey> keys, long deadlineMs) {
    public PrefetchRequest {
        Objects.requireNonNull(namespace, "namespace");
        keys = List.copyOf(keys);
        if (deadlineMs < 1) {
            throw new IllegalArgumentException("deadlineMs must be >= 1, got " + deadlineMs);
        }
    }
}
