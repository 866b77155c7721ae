package orbitkv.server.incarnation;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.LeaseStatus;
import orbitkv.membership.Member;
import orbitkv.membership.MemberRecordRefusals;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipEvent;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.membership.RegistrationResult;

/**
 * A test-owned Membership whose view the test sets; events go to the listener as the real one delivers
 * them (in order, current state first). The real one is built from etcd and checked in conformance.
 */
public final class TestMembership implements Membership {
    public static final ClusterIdentity CLUSTER = new ClusterIdentity("unit", new UUID(7, 7));

    record View(long revision, boolean valid, Map<NodeId, Member> byNode) implements MembershipView {
        @Override
        public ClusterIdentity cluster() {
            return CLUSTER;
        }

        @Override
        public Collection<Member> members() {
            return valid ? byNode.values() : List.of();
        }

        @Override
        public Optional<Member> member(NodeId nodeId) {
            return valid ? Optional.ofNullable(byNode.get(nodeId)) : Optional.empty();
        }

        @Override
        public boolean isAdmitted(Incarnation incarnation) {
            return member(incarnation.nodeId()).map(m -> m.incarnation().equals(incarnation)).orElse(false);
        }
    }

    private final Incarnation self;
    private volatile View view;
    private volatile boolean fenced;
    private volatile LeaseStatus lease = new LeaseStatus(0, 0, 0, 0);
    private volatile MemberRecordRefusals refused = MemberRecordRefusals.NONE;
    private Consumer<MembershipEvent> listener = e -> {};

    public TestMembership(Incarnation self) {
        this.self = self;
        this.view = view(1, true, List.of(self));
    }

    public static Incarnation incarnation(String node, long epoch) {
        return Incarnation.random(new NodeId(node), new NodeEpoch(epoch));
    }

    public static View view(long revision, boolean valid, List<Incarnation> members) {
        return new View(revision, valid, members.stream().collect(Collectors.toMap(Incarnation::nodeId,
                i -> new Member(i, new Endpoint("127.0.0.1", 7000), new Endpoint("127.0.0.1", 8000), ClusterIdentity.PROTOCOL))));
    }

    public void change(View v) {
        view = v;
        listener.accept(v.valid() ? new MembershipEvent.Changed(v) : new MembershipEvent.Suspended(v, "test"));
    }

    public void fence() {
        fenced = true;
        view = view(view.revision(), false, List.of());
        listener.accept(new MembershipEvent.Fenced(view, self, MembershipEvent.FenceCause.LEASE_DEADLINE_PASSED));
    }

    @Override
    public Incarnation incarnation() {
        return self;
    }

    @Override
    public ClusterIdentity cluster() {
        return CLUSTER;
    }

    @Override
    public MembershipView view() {
        return view;
    }

    @Override
    public boolean fenced() {
        return fenced;
    }

    /** What the lease reports from now on (renewals failing, counts). */
    public void lease(LeaseStatus status) {
        lease = status;
    }

    public void refused(MemberRecordRefusals r) {
        refused = r;
    }

    @Override
    public LeaseStatus leaseStatus() {
        return fenced ? new LeaseStatus(0, 0, 0, lease.failedRenewals(), LeaseStatus.LeaseState.FENCED, 0) : lease;
    }

    @Override
    public MemberRecordRefusals refusedRecords() {
        return refused;
    }

    @Override
    public void addListener(Consumer<MembershipEvent> l) {
        listener = l;
        l.accept(new MembershipEvent.Changed(view));
    }

    @Override
    public RegistrationResult reregister() {
        throw new AssertionError("reregister is not exercised by these tests");
    }

    @Override
    public void close() {}
}
