package orbitkv.membership;

/**
 * Operator-chosen stable node name (DESIGN §3); an etcd key segment, so restricted to
 * 1..64 characters of {@code [A-Za-z0-9._-]}.
 *
 * @param value the name
 */
public record NodeId(String value) implements Comparable<NodeId> {
    public NodeId {
        IdentifierRule.require("node id", value);
    }

    @Override
    public int compareTo(NodeId other) {
        return value.compareTo(other.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
