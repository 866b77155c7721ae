package orbitkv.conformance.peer;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeId;

/** A test-owned immutable membership view (the issue allows it until the real etcd membership is wired). */
public record StaticMembership(ClusterIdentity cluster, long revision, boolean valid, Map<NodeId, Member> byNode)
        implements MembershipView {
    public StaticMembership {
        byNode = Map.copyOf(byNode);
    }

    /** A valid view of {@code members}. */
    public static StaticMembership of(ClusterIdentity cluster, long revision, List<Member> members) {
        Map<NodeId, Member> m = new LinkedHashMap<>();
        members.forEach(x -> m.put(x.nodeId(), x));
        return new StaticMembership(cluster, revision, true, m);
    }

    /** A member record for {@code incarnation} whose peer listener is {@code peer}. */
    public static Member member(Incarnation incarnation, Endpoint peer) {
        return new Member(incarnation, peer, new Endpoint("127.0.0.1", 1), ClusterIdentity.PROTOCOL);
    }

    /** The same members, suspended (not valid). */
    public StaticMembership suspended() {
        return new StaticMembership(cluster, revision + 1, false, Map.of());
    }

    @Override
    public Collection<Member> members() {
        return valid ? List.copyOf(byNode.values()) : List.of();
    }

    @Override
    public Optional<Member> member(NodeId nodeId) {
        return valid ? Optional.ofNullable(byNode.get(nodeId)) : Optional.empty();
    }

    @Override
    public boolean isAdmitted(Incarnation incarnation) {
        Member m = byNode.get(incarnation.nodeId());
        return valid && m != null && m.incarnation().equals(incarnation);
    }
}
