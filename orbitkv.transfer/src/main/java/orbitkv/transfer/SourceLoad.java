package orbitkv.transfer;

import java.util.Objects;
import orbitkv.membership.Incarnation;

/**
 * A source's load summary carried on an Authorize answer (ROUTE-9; {@code SourceLoad} in transfer.proto): the
 * peaks of its grant, pin and egress gauges over a window that ends when it answered. Disposable evidence about
 * load: never a grant, never a promise of a queue wait, never written to etcd. The requester stamps it with its
 * own receipt time and expires it by receipt age (the source's clock is never compared with the requester's).
 *
 * @param measuredBy the source incarnation that measured it (the answering one, which a refusal may show to be
 *     another incarnation of the node than the one asked)
 * @param windowMs the measurement window, 1..{@value #WINDOW_MS_MAX} ms
 * @param grantsOutstanding peak grants not yet ended
 * @param pinnedBytes peak payload bytes pinned for grants
 * @param egressQueuedBytes peak payload bytes handed to data connections and not yet written out
 */
public record SourceLoad(Incarnation measuredBy, long windowMs, int grantsOutstanding, long pinnedBytes,
        long egressQueuedBytes) {
    /** Longest window a requester accepts. */
    public static final long WINDOW_MS_MAX = 60_000;

    public SourceLoad {
        Objects.requireNonNull(measuredBy, "measuredBy");
        if (windowMs < 1 || windowMs > WINDOW_MS_MAX) {
            throw new IllegalArgumentException("load window must be 1.." + WINDOW_MS_MAX + " ms, got " + windowMs);
        }
        if (grantsOutstanding < 0 || pinnedBytes < 0 || egressQueuedBytes < 0) {
            throw new IllegalArgumentException("load figures must be >= 0, got grants " + grantsOutstanding
                    + ", pinned " + pinnedBytes + ", egress " + egressQueuedBytes);
        }
    }
}
