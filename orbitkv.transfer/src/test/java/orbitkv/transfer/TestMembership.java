package orbitkv.transfer;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeId;

/** A membership view the tests set: which incarnations are admitted, and whether the view is valid. */
public final class TestMembership implements Supplier<MembershipView> {
    private final ClusterIdentity cluster;
    private final AtomicReference<MembershipView> current = new AtomicReference<>();
    private long revision;

    public TestMembership(ClusterIdentity cluster, Incarnation... admitted) {
        this.cluster = cluster;
        set(true, admitted);
    }

    /** Installs a new view and returns it. */
    public synchronized MembershipView set(boolean valid, Incarnation... admitted) {
        MembershipView v = new View(cluster, ++revision, valid, Set.of(admitted));
        current.set(v);
        return v;
    }

    @Override
    public MembershipView get() {
        return current.get();
    }

    private record View(ClusterIdentity cluster, long revision, boolean valid, Set<Incarnation> admitted)
            implements MembershipView {
        @Override
        public Collection<Member> members() {
            return List.of();
        }

        @Override
        public Optional<Member> member(NodeId nodeId) {
            return Optional.empty();
        }

        @Override
        public boolean isAdmitted(Incarnation incarnation) {
            return valid && admitted.contains(incarnation);
        }
    }
}
