package orbitkv.membership.etcd;

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeId;

/**
 * An immutable {@link MembershipView} at one revision (MEM-7). One member per node id, so at most one
 * incarnation of a node is admitted; {@link #isAdmitted} is one hash lookup plus an equality (O(1)).
 * An invalid view (suspended or fenced) admits nobody (MEM-9, INV-7).
 */
final class AdmittedView implements MembershipView {
    private final ClusterIdentity cluster;
    private final long revision;
    private final boolean valid;
    private final Map<NodeId, Member> byNode;
    private final List<Member> ordered;

    private AdmittedView(ClusterIdentity cluster, long revision, boolean valid, Map<NodeId, Member> byNode) {
        this.cluster = cluster;
        this.revision = revision;
        this.valid = valid;
        this.byNode = valid ? Map.copyOf(byNode) : Map.of();
        this.ordered = valid ? List.copyOf(new TreeMap<>(byNode).values()) : List.of();
    }

    static AdmittedView valid(ClusterIdentity cluster, long revision, Map<NodeId, Member> members) {
        return new AdmittedView(cluster, revision, true, members);
    }

    static AdmittedView invalid(ClusterIdentity cluster, long revision) {
        return new AdmittedView(cluster, revision, false, Map.of());
    }

    /** A copy of the member map, for the next view. */
    Map<NodeId, Member> memberMap() {
        return new HashMap<>(byNode);
    }

    @Override
    public ClusterIdentity cluster() {
        return cluster;
    }

    @Override
    public long revision() {
        return revision;
    }

    @Override
    public boolean valid() {
        return valid;
    }

    @Override
    public Collection<Member> members() {
        return Collections.unmodifiableList(ordered);
    }

    @Override
    public Optional<Member> member(NodeId nodeId) {
        return Optional.ofNullable(byNode.get(nodeId));
    }

    @Override
    public boolean isAdmitted(Incarnation incarnation) {
        if (!valid) {
            return false;
        }
        Member m = byNode.get(incarnation.nodeId());
        return m != null && m.incarnation().equals(incarnation);
    }

    @Override
    public String toString() {
        return "MembershipView{revision=" + revision + ", valid=" + valid + ", members="
                + ordered.stream().map(m -> m.incarnation().toString()).toList() + "}";
    }
}
