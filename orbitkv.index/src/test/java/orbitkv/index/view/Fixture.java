package orbitkv.index.view;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.membership.ProtocolClock;

/** Shared test fixture: an in-memory membership, a manual clock, a stepped cleanup executor. */
final class Fixture {
    static final Namespace NS = Namespace.utf8("ns-a");
    static final Scope SCOPE = Scope.of(List.of(NS));
    static final Incarnation SELF = inc("self", 1);

    final AtomicLong clock = new AtomicLong(1_000_000_000L);
    final ArrayDeque<Runnable> cleanupTasks = new ArrayDeque<>();
    final Executor cleanup = cleanupTasks::add;
    final GlobalIndex index;
    long revision;

    Fixture(IndexConfig config) {
        LongSupplier c = clock::get;
        index = GlobalIndex.create(SELF, SCOPE, config, c, cleanup);
    }

    /** An index on an injected {@link ProtocolClock} (issue 25); {@link #clock} is then unused. */
    Fixture(IndexConfig config, ProtocolClock protocolClock) {
        index = GlobalIndex.create(SELF, SCOPE, config, protocolClock, cleanup);
    }

    static Incarnation inc(String node, long id) {
        return new Incarnation(new NodeId(node), new NodeEpoch(1), new UUID(7, id));
    }

    static StateKey key(String k) {
        return new StateKey(NS, k.getBytes(StandardCharsets.UTF_8));
    }

    void admit(Incarnation... owners) {
        Map<NodeId, Member> m = new LinkedHashMap<>();
        m.put(SELF.nodeId(), member(SELF));
        for (Incarnation o : owners) {
            m.put(o.nodeId(), member(o));
        }
        index.onMembership(new View(++revision, true, m));
    }

    void suspend() {
        index.onMembership(new View(++revision, false, Map.of()));
    }

    private static Member member(Incarnation i) {
        return new Member(i, new Endpoint("127.0.0.1", 1), new Endpoint("127.0.0.1", 2), ClusterIdentity.PROTOCOL);
    }

    /** A one-page snapshot of {@code rows} puts committed at {@code s1}. */
    CommitOutcome install(Incarnation owner, UUID view, long s1, List<ResidenceRecord> rows) {
        var digest = SCOPE.digest();
        TranscriptDigest.Builder t = TranscriptDigest.builder().begin(1, view, digest, s1);
        StageOutcome b = index.beginStaging(owner, view, digest, s1, 1);
        if (b instanceof StageOutcome.Rejected r) {
            return new CommitOutcome.Rejected(r.reason());
        }
        long max = 0;
        long pages = 0;
        if (!rows.isEmpty()) {
            pages = 1;
            t.page(2, 1, rows);
            StageOutcome p = index.stagePage(owner, view, 1, 2, rows);
            if (p instanceof StageOutcome.Rejected r) {
                return new CommitOutcome.Rejected(r.reason());
            }
            for (ResidenceRecord r : rows) {
                max = Math.max(max, r.sequence());
            }
        }
        return index.commit(owner, view, new CommitMarker(s1, pages, 1, pages == 0 ? 1 : 2, max, t.finish()));
    }

    static List<ResidenceRecord> puts(int n, long size) {
        java.util.ArrayList<ResidenceRecord> l = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            l.add(ResidenceRecord.put(key(String.format("k%06d", i)), Medium.DRAM, i + 1, size));
        }
        return l;
    }

    void runCleanupStep() {
        Runnable r = cleanupTasks.poll();
        if (r != null) {
            r.run();
        }
    }

    record View(long revision, boolean valid, Map<NodeId, Member> byNode) implements MembershipView {
        @Override
        public ClusterIdentity cluster() {
            return new ClusterIdentity("test", new UUID(0, 1));
        }

        @Override
        public Collection<Member> members() {
            return byNode.values();
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
}
