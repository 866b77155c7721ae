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
 * backend overriding the Manager's default, whether the answer is streamed ({@link StreamedRestore}) and whether the
 * blocks fetched from peers are to be kept locally ({@code store_local}, ROUTE-12: only with a storage reservation
 * and a reuse benefit, {@link Retention}; a demand fetch alone never keeps a copy).
 */
public record RestoreRequest(Namespace namespace, List<StateKey> keys, long deadlineMs, Optional<BackendPolicy> backend,
        boolean stream, boolean storeLocal) {
    public RestoreRequest {
        Objects.requireNonNull(namespace, "namespace");
        keys = List.copyOf(keys);
        Objects.requireNonNull(backend, "backend");
        if (deadlineMs < 1) {
            throw new IllegalArgumentException("deadlineMs must be >= 1, got " + deadlineMs);
        }
    }

    /** A restore that keeps nothing it fetched. */
    public RestoreRequest(Namespace namespace, List<StateKey> keys, long deadlineMs, Optional<BackendPolicy> backend,
            boolean stream) {
        this(namespace, keys, deadlineMs, backend, stream, false);
    }

    public RestoreRequest(Namespace namespace, List<StateKey> keys, long deadlineMs) {
        this(namespace, keys, deadlineMs, Optional.empty(), false);
    }
}
