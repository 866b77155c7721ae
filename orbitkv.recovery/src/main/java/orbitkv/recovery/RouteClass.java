package orbitkv.recovery;

import java.util.Objects;
import java.util.Optional;
import orbitkv.membership.NodeId;

/**
 * A cost-model class (ROUTE-3, ROUTE-6): the route kind and, for a peer route, the peer node. Observations
 * are comparable only within one class. The peer is a node, not an incarnation: a restarted process on the
 * same host keeps the same physical path, so its history stays relevant.
 *
 * @param kind the route kind
 * @param peer present iff {@code kind} is a peer kind
 */
public record RouteClass(RouteKind kind, Optional<NodeId> peer) implements Comparable<RouteClass> {
    public RouteClass {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(peer, "peer");
        if (kind.local() == peer.isPresent()) {
            throw new IllegalArgumentException("a " + kind + " class " + (kind.local() ? "has no" : "needs a") + " peer");
        }
    }

    public static RouteClass local(RouteKind kind) {
        return new RouteClass(kind, Optional.empty());
    }

    public static RouteClass peer(RouteKind kind, NodeId node) {
        return new RouteClass(kind, Optional.of(node));
    }

    public static RouteClass of(RouteSource source) {
        return switch (source) {
            case RouteSource.Local l -> local(l.kind());
            case RouteSource.Peer p -> peer(p.kind(), p.owner().nodeId());
        };
    }

    @Override
    public int compareTo(RouteClass o) {
        int c = kind.compareTo(o.kind);
        if (c != 0) {
            return c;
        }
        return peer.map(NodeId::value).orElse("").compareTo(o.peer.map(NodeId::value).orElse(""));
    }

    /** {@code local-dram}, {@code peer-ssd@node}. */
    @Override
    public String toString() {
        return kind.traceName() + peer.map(n -> "@" + n.value()).orElse("");
    }
}
