package orbitkv.recovery;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;

/**
 * One compiled demand batch (ROUTE-1, IDX-14): the block keys of one prefix in the engine's chain order, the
 * completion target, the deadline and the request's own evidence rules. The recoverable prefix is always
 * measured from the first key: a key after a gap is never reported recoverable.
 *
 * @param namespace the representation-bound namespace every key belongs to (one representation per demand)
 * @param keys 1..{@value #KEYS_MAX} distinct keys, in chain order
 * @param target the completion target (only {@link CompletionTarget.HostReady} is supported)
 * @param deadlineNanos the request's deadline on the selection's monotonic clock ({@code System.nanoTime()} unless
 *     the selection was created with another clock); compared by subtraction, so any long is valid. Planning
 *     ignores it; execution admits nothing after it (ROUTE-7)
 * @param staleHintsAllowed whether replicas flagged stale by the index (a repairing or over-age owner view,
 *     SNAP-11) are eligible; fresh replicas are always preferred at an equal span
 * @param destinationBytesMax payload bytes the destination can take (the restore response bound minus its
 *     framing); a capacity constraint, never a cost (ROUTE-3)
 * @param network the admission headroom of the lane peer routes receive on (issue 39 item 6), empty when the Manager
 *     runs no node-local admission; a constraint of the cost model, never a cost (ROUTE-3, {@link LaneHeadroom})
 *
 * <p>The three constraints of ROUTE-3: memory is {@code destinationBytesMax}, network is {@code network}, and the
 * device is {@code target}: a host-only target ({@link CompletionTarget.HostReady}) is the one supported; a device
 * target ({@link CompletionTarget.GpuReady}) is representable and every plan for it stops at once
 * ({@link PrefixStop#TARGET_UNSUPPORTED}: no GPU here).
 */
public record Demand(Namespace namespace, List<StateKey> keys, CompletionTarget target, long deadlineNanos,
        boolean staleHintsAllowed, long destinationBytesMax, Optional<LaneHeadroom> network) {
    /** Keys per demand batch: the index's lookup bound (IDX-9), so one lookup serves one demand. */
    public static final int KEYS_MAX = 128;

    public Demand {
        Objects.requireNonNull(namespace, "demand namespace must not be null");
        Objects.requireNonNull(target, "demand completion target must not be null");
        keys = List.copyOf(keys);
        if (keys.isEmpty() || keys.size() > KEYS_MAX) {
            throw new IllegalArgumentException("a demand holds 1.." + KEYS_MAX + " keys, got " + keys.size());
        }
        Set<StateKey> seen = new HashSet<>(keys.size() * 2);
        for (int i = 0; i < keys.size(); i++) {
            StateKey k = keys.get(i);
            if (!k.namespace().equals(namespace)) {
                throw new IllegalArgumentException("demand key " + i + " (" + k + ") is not in the demand namespace " + namespace);
            }
            if (!seen.add(k)) {
                throw new IllegalArgumentException("demand key " + i + " (" + k + ") repeats an earlier key");
            }
        }
        if (destinationBytesMax < 0) {
            throw new IllegalArgumentException("destinationBytesMax must be >= 0, got " + destinationBytesMax);
        }
        Objects.requireNonNull(network, "demand network constraint must not be null (Optional.empty() for none)");
    }

    /** A demand without a network constraint. */
    public Demand(Namespace namespace, List<StateKey> keys, CompletionTarget target, long deadlineNanos,
            boolean staleHintsAllowed, long destinationBytesMax) {
        this(namespace, keys, target, deadlineNanos, staleHintsAllowed, destinationBytesMax, Optional.empty());
    }

    /** A HostReady demand without stale hints and without a capacity limit. */
    public static Demand hostReady(Namespace namespace, List<StateKey> keys, long deadlineNanos) {
        return new Demand(namespace, keys, CompletionTarget.hostReady(), deadlineNanos, false, Long.MAX_VALUE);
    }

    public Demand withStaleHintsAllowed(boolean allowed) {
        return new Demand(namespace, keys, target, deadlineNanos, allowed, destinationBytesMax, network);
    }

    public Demand withDestinationBytesMax(long bytes) {
        return new Demand(namespace, keys, target, deadlineNanos, staleHintsAllowed, bytes, network);
    }

    public Demand withTarget(CompletionTarget t) {
        return new Demand(namespace, keys, t, deadlineNanos, staleHintsAllowed, destinationBytesMax, network);
    }

    public Demand withDeadlineNanos(long nanos) {
        return new Demand(namespace, keys, target, nanos, staleHintsAllowed, destinationBytesMax, network);
    }

    /** This demand with the admission headroom of the lane its peer routes receive on (issue 39 item 6). */
    public Demand withNetwork(LaneHeadroom headroom) {
        return new Demand(namespace, keys, target, deadlineNanos, staleHintsAllowed, destinationBytesMax,
                Optional.of(headroom));
    }
}
