package orbitkv.transfer;

import java.util.Objects;

/**
 * The terminal outcome of one READ, delivered only once the READ has physically stopped: after it no byte is
 * written into the destination (INV-8: physical completion, host readiness and release are separate events,
 * and a wait that ends early is not a drain). Only {@link Completed} exposes the destination.
 */
public sealed interface ReadResult {
    /**
     * Physically complete and verified: the destination holds exactly the block (its CRC32C matched the grant's),
     * so the host may use it. Releasing the grant is a separate, later event.
     *
     * @param backend the backend that moved the bytes
     * @param route the route class (the source medium)
     * @param bytes the block length
     * @param latencyNanos from admission to verified completion
     * @param fallback why a shared-memory preference went over TCP, or NONE
     */
    record Completed(Backend backend, PeerRouteClass route, long bytes, long latencyNanos, SharedMemoryFallback fallback)
            implements ReadResult {
        public Completed {
            Objects.requireNonNull(backend, "backend");
            Objects.requireNonNull(route, "route");
            Objects.requireNonNull(fallback, "fallback");
        }
    }

    /** Refused before any byte was written; the destination is untouched. */
    record Refused(ReadRefusal reason, String detail) implements ReadResult {
        public Refused {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(detail, "detail");
        }
    }

    /** Failed after admission; the destination range was zero-filled once the READ stopped. */
    record Failed(ReadFailure reason, String detail) implements ReadResult {
        public Failed {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(detail, "detail");
        }
    }

    /**
     * The READ's deadline passed first. The outcome is delivered only after the READ was stopped (connection
     * closed, copy abandoned): never counted as drained; the destination range was zero-filled.
     */
    record TimedOut(long elapsedNanos) implements ReadResult {}

    /** The requester cancelled it; as {@link TimedOut}, delivered once the READ stopped, destination zero-filled. */
    record Cancelled() implements ReadResult {}
}
