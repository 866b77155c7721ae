package orbitkv.conformance.peer;

import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.inventory.wire.AllNamespaces;
import orbitkv.inventory.wire.Delta;
import orbitkv.inventory.wire.IncarnationRef;
import orbitkv.inventory.wire.NamespaceList;
import orbitkv.inventory.wire.Open;
import orbitkv.inventory.wire.Record;
import orbitkv.inventory.wire.RecordOp;
import orbitkv.inventory.wire.ScopeSpec;
import orbitkv.inventory.wire.SnapshotBegin;
import orbitkv.inventory.wire.SnapshotCommit;
import orbitkv.inventory.wire.SnapshotPage;
import orbitkv.inventory.wire.Uuid;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;

/**
 * Independent builders of v4 wire messages from the documented schema (docs/protocol.md), so the peer does
 * not reuse the implementation's codec: records with a namespace table, Opens, snapshot frames, deltas.
 */
public final class WireFrames {
    private WireFrames() {}

    public static Uuid uuid(UUID u) {
        return Uuid.newBuilder().setMsb(u.getMostSignificantBits()).setLsb(u.getLeastSignificantBits()).build();
    }

    public static UUID uuid(Uuid u) {
        return new UUID(u.getMsb(), u.getLsb());
    }

    public static IncarnationRef ref(Incarnation i) {
        return IncarnationRef.newBuilder().setNodeId(i.nodeId().value()).setNodeEpoch(i.epoch().value())
                .setId(uuid(i.id())).build();
    }

    public static ScopeSpec scope(Scope scope) {
        if (scope instanceof Scope.NamespaceList l) {
            NamespaceList.Builder b = NamespaceList.newBuilder();
            l.namespaces().forEach(n -> b.addNamespaces(ByteString.copyFrom(n.bytes())));
            return ScopeSpec.newBuilder().setList(b).build();
        }
        return ScopeSpec.newBuilder().setAll(AllNamespaces.getDefaultInstance()).build();
    }

    /** A valid Open for the given identities. */
    public static Open.Builder open(ClusterIdentity cluster, Incarnation source, Incarnation requester, Scope scope,
            UUID sessionId) {
        return Open.newBuilder().setProtocol(ClusterIdentity.PROTOCOL).setClusterUuid(uuid(cluster.uuid()))
                .setSource(ref(source)).setRequester(ref(requester)).setScope(scope(scope))
                .setScopeDigest(ByteString.copyFrom(scope.digest().bytes())).setSessionId(uuid(sessionId));
    }

    /** Namespace table and records, in the given order. */
    public record Encoded(List<ByteString> namespaces, List<Record> records) {}

    public static Encoded records(List<ResidenceRecord> records) {
        Map<Namespace, Integer> index = new LinkedHashMap<>();
        List<Record> out = new ArrayList<>();
        for (ResidenceRecord r : records) {
            int i = index.computeIfAbsent(r.key().namespace(), n -> index.size());
            out.add(Record.newBuilder().setNamespaceIndex(i).setKey(ByteString.copyFrom(r.key().key()))
                    .setMedium(r.medium() == Medium.DRAM ? orbitkv.inventory.wire.Medium.MEDIUM_DRAM
                            : orbitkv.inventory.wire.Medium.MEDIUM_SSD)
                    .setOp(r.isDelete() ? RecordOp.RECORD_OP_DELETE : RecordOp.RECORD_OP_PUT)
                    .setSequence(r.sequence()).setSizeBytes(r.sizeBytes()).build());
        }
        List<ByteString> table = new ArrayList<>();
        index.keySet().forEach(n -> table.add(ByteString.copyFrom(n.bytes())));
        return new Encoded(table, out);
    }

    public static Delta delta(long from, long to, List<ResidenceRecord> records) {
        Encoded e = records(records);
        return Delta.newBuilder().setFrom(from).setTo(to).addAllNamespaces(e.namespaces()).addAllRecords(e.records()).build();
    }

    public static SnapshotBegin begin(UUID viewId, long s0, ScopeDigest digest) {
        return SnapshotBegin.newBuilder().setViewId(uuid(viewId)).setS0(s0)
                .setScopeDigest(ByteString.copyFrom(digest.bytes())).build();
    }

    public static SnapshotPage page(UUID viewId, long ordinal, List<ResidenceRecord> records) {
        Encoded e = records(records);
        return SnapshotPage.newBuilder().setViewId(uuid(viewId)).setPageOrdinal(ordinal)
                .addAllNamespaces(e.namespaces()).addAllRecords(e.records()).build();
    }

    public static SnapshotCommit commit(UUID viewId, long s1, long pages, long firstFrame, long lastFrame,
            long maxScanned, TranscriptDigest digest) {
        return SnapshotCommit.newBuilder().setViewId(uuid(viewId)).setS1(s1).setPageCount(pages)
                .setFirstFrame(firstFrame).setLastFrame(lastFrame).setMaxScannedSequence(maxScanned)
                .setTranscriptDigest(ByteString.copyFrom(digest.bytes())).build();
    }

    /** The interval of a delta, for transcript computation. */
    public static Interval interval(Delta d) {
        return new Interval(d.getFrom(), d.getTo());
    }
}
