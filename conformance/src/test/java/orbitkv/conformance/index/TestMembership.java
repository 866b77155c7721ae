package orbitkv.conformance.index;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;

/** A test-owned immutable membership view (the real one is built from etcd by orbitkv.membership). */
record TestMembership(long revision, boolean valid, Map<NodeId, Member> byNode) implements MembershipView {
    static final ClusterIdentity CLUSTER = new ClusterIdentity("conformance", new UUID(1, 2));

    static TestMembership of(long revision, boolean valid, Collection<Incarnation> incarnations) {
        Map<NodeId, Member> m = new LinkedHashMap<>();
        if (valid) {
            for (Incarnation i : incarnations) {
                m.put(i.nodeId(), new Member(i, new Endpoint("127.0.0.1", 7000), new Endpoint("127.0.0.1", 8000),
                        ClusterIdentity.PROTOCOL));
            }
        }
        return new TestMembership(revision, valid, Map.copyOf(m));
    }

    static Incarnation incarnation(String node, long epoch, long id) {
        return new Incarnation(new NodeId(node), new NodeEpoch(epoch), new UUID(epoch, id));
    }

    @Override
    public ClusterIdentity cluster() {
        return CLUSTER;
    }

    @Override
    public Collection<Member> members() {
        return List.copyOf(byNode.values());
    }

    @Override
    public Optional<Member> member(NodeId nodeId) {
        return Optional.ofNullable(byNode.get(nodeId));
    }

    @Override
    public boolean isAdmitted(Incarnation incarnation) {
        Member m = byNode.get(incarnation.nodeId());
        return valid && m != null && m.incarnation().equals(incarnation);
    }
}
