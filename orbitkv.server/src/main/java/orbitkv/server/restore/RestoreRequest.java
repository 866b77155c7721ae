package orbitkv.server.restore;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.transfer.BackendPolicy;

/**
 * One restore as the domain sees it, already validated by whoever decoded it (HTTP API v1's
 * {@code POST /cache/restore}): the namespace, the keys in chain order (distinct), the deadline, an optional READ
 * backend overriding the Manager's default, and whether the answer is streamed ({@link StreamedRestore}).
 */
public record RestoreRequest(Namespace namespace, List<StateKey> keys, long deadlineMs, Optional<BackendPolicy> backend,
        boolean stream) {
    public RestoreRequest {
        Objects.requireNonNull(namespace, "namespace");
        keys = List.copyOf(keys);
        Objects.requireNonNull(backend, "backend");
        if (deadlineMs < 1) {
            throw new IllegalArgumentException("deadlineMs must be >= 1, got " + deadlineMs);
        }
    }

    public RestoreRequest(Namespace namespace, List<StateKey> keys, long deadlineMs) {
        this(namespace, keys, deadlineMs, Optional.empty(), false);
    }
}
