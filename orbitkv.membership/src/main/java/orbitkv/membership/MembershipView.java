package orbitkv.membership;

import java.util.Collection;
import java.util.Optional;

/**
 * A consistent view of admitted members at one etcd revision (MEM-7), the only source list of the
 * inventory sessions and the GlobalIndex (IDX-2).
 *
 * <p>At any revision at most one incarnation of a node id is admitted. A view that is not
 * {@link #valid()} (watch gap, expired or fenced membership) admits nobody remote (MEM-9, INV-7).
 * Implementations are immutable snapshots; {@link #isAdmitted} is O(1).
 */
public interface MembershipView {
    /** The cluster this view belongs to. */
    ClusterIdentity cluster();

    /** The etcd revision this view was read or watched at; 0 before the first read. */
    long revision();

    /** False while membership is suspended (watch gap), expired or fenced: no remote admission. */
    boolean valid();

    /** The admitted members, one per node id, ordered by node id. Empty when not {@link #valid()}. */
    Collection<Member> members();

    /** The admitted member with this node id, if any. */
    Optional<Member> member(NodeId nodeId);

    /** True iff this exact incarnation is admitted in this view (and the view is valid). O(1). */
    boolean isAdmitted(Incarnation incarnation);
}
