package orbitkv.index.view;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;

/** A GlobalIndex populated through the ViewReceiver SPI, shared by the benchmarks and the footprint harness. */
final class BenchWorld {
    static final Namespace NS = Namespace.utf8("bench-namespace");
    static final Scope SCOPE = Scope.of(List.of(NS));
    static final Incarnation SELF = new Incarnation(new NodeId("self"), new NodeEpoch(1), new UUID(1, 1));
    static final int PAGE_ROWS = 1024;

    final GlobalIndex index;
    final Incarnation[] owners;
    final UUID[] views;
    final long[] cursors;

    BenchWorld(int owners, long indexBytesMax) {
        index = GlobalIndex.create(SELF, SCOPE, IndexConfig.defaults().withIndexBytesMax(indexBytesMax), System::nanoTime,
                Runnable::run);
        this.owners = new Incarnation[owners];
        this.views = new UUID[owners];
        this.cursors = new long[owners];
        Map<NodeId, Member> m = new LinkedHashMap<>();
        m.put(SELF.nodeId(), member(SELF));
        for (int i = 0; i < owners; i++) {
            this.owners[i] = new Incarnation(new NodeId("owner-" + i), new NodeEpoch(1), new UUID(2, i));
            m.put(this.owners[i].nodeId(), member(this.owners[i]));
        }
        index.onMembership(new View(m));
    }

    static StateKey key(long k) {
        byte[] b = new byte[32]; // a chained block hash is typically 32 bytes
        ByteBuffer.wrap(b).putLong(k * 0x9E3779B97F4A7C15L).putLong(k);
        return new StateKey(NS, b);
    }

    /** Installs owner {@code o} with keys {@code [0, rows)} through a paged snapshot (SNAP-1..SNAP-7). */
    void install(int o, int rows) {
        UUID view = new UUID(3, o);
        views[o] = view;
        long s1 = rows;
        TranscriptDigest.Builder t = TranscriptDigest.builder().begin(1, view, SCOPE.digest(), s1);
        index.beginStaging(owners[o], view, SCOPE.digest(), s1, 1);
        List<StateKey> keys = new ArrayList<>(rows);
        for (int k = 0; k < rows; k++) {
            keys.add(key(k));
        }
        keys.sort(null);
        long frame = 1;
        long pages = 0;
        for (int from = 0; from < rows; from += PAGE_ROWS) {
            List<ResidenceRecord> page = new ArrayList<>(PAGE_ROWS);
            for (int k = from; k < Math.min(rows, from + PAGE_ROWS); k++) {
                page.add(ResidenceRecord.put(keys.get(k), Medium.DRAM, k + 1, 4096));
            }
            frame++;
            pages++;
            t.page(frame, pages, page);
            index.stagePage(owners[o], view, pages, frame, page);
        }
        CommitOutcome c = index.commit(owners[o], view, new CommitMarker(s1, pages, 1, frame, rows, t.finish()));
        if (!(c instanceof CommitOutcome.Installed)) {
            throw new IllegalStateException("bench install failed: " + c);
        }
        cursors[o] = s1;
    }

    private static Member member(Incarnation i) {
        return new Member(i, new Endpoint("127.0.0.1", 1), new Endpoint("127.0.0.1", 2), ClusterIdentity.PROTOCOL);
    }

    record View(Map<NodeId, Member> byNode) implements MembershipView {
        @Override
        public ClusterIdentity cluster() {
            return new ClusterIdentity("bench", new UUID(0, 1));
        }

        @Override
        public long revision() {
            return 1;
        }

        @Override
        public boolean valid() {
            return true;
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
            return m != null && m.incarnation().equals(incarnation);
        }
    }
}
