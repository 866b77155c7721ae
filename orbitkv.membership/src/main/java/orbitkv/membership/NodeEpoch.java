package orbitkv.membership;

/**
 * The persisted per-node registration counter: strictly increasing at each registration and never
 * decreasing, also across rollback (MEM-5, OPS-3). Epoch 1 is the first registration.
 *
 * @param value the epoch, {@code >= 1}
 */
public record NodeEpoch(long value) implements Comparable<NodeEpoch> {
    public NodeEpoch {
        if (value < 1) {
            throw new IllegalArgumentException("node epoch must be >= 1, got " + value);
        }
    }

    /** The epoch of the next registration; refuses to overflow rather than wrap (SES-9). */
    public NodeEpoch next() {
        return new NodeEpoch(Math.addExact(value, 1));
    }

    @Override
    public int compareTo(NodeEpoch other) {
        return Long.compare(value, other.value);
    }

    @Override
    public String toString() {
        return Long.toString(value);
    }
}
