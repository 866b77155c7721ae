package orbitkv.inventory.codec;

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
import orbitkv.inventory.wire.Delta;
import orbitkv.inventory.wire.Record;
import orbitkv.inventory.wire.RecordOp;
import orbitkv.inventory.wire.SnapshotPage;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.wire.Uuid;

/** The generated classes' serialization of the same content: the reference the encoder must equal byte for byte. */
final class WireReference {
    private WireReference() {}

    static Uuid uuid(UUID u) {
        return Uuid.newBuilder().setMsb(u.getMostSignificantBits()).setLsb(u.getLeastSignificantBits()).build();
    }

    /** Namespace table in first-appearance order, written independently of the encoder and FrameCodec. */
    private record Table(List<ByteString> namespaces, List<Record> records) {}

    private static Table table(List<ResidenceRecord> records) {
        Map<Namespace, Integer> index = new LinkedHashMap<>();
        List<Record> out = new ArrayList<>();
        for (ResidenceRecord r : records) {
            int i = index.computeIfAbsent(r.key().namespace(), ns -> index.size());
            out.add(Record.newBuilder().setNamespaceIndex(i).setKey(ByteString.copyFrom(r.key().key()))
                    .setMedium(r.medium() == Medium.DRAM ? orbitkv.inventory.wire.Medium.MEDIUM_DRAM : orbitkv.inventory.wire.Medium.MEDIUM_SSD)
                    .setOp(r.isDelete() ? RecordOp.RECORD_OP_DELETE : RecordOp.RECORD_OP_PUT)
                    .setSequence(r.sequence()).setSizeBytes(r.sizeBytes()).build());
        }
        return new Table(index.keySet().stream().map(ns -> ByteString.copyFrom(ns.bytes())).toList(), out);
    }

    static SourceFrame page(UUID session, long frameNumber, UUID view, long ordinal, List<ResidenceRecord> records) {
        Table t = table(records);
        return SourceFrame.newBuilder().setSessionId(uuid(session)).setFrameNumber(frameNumber)
                .setSnapshotPage(SnapshotPage.newBuilder().setViewId(uuid(view)).setPageOrdinal(ordinal)
                        .addAllNamespaces(t.namespaces()).addAllRecords(t.records()))
                .build();
    }

    static SourceFrame delta(UUID session, long frameNumber, Interval interval, List<ResidenceRecord> records) {
        Table t = table(records);
        return SourceFrame.newBuilder().setSessionId(uuid(session)).setFrameNumber(frameNumber)
                .setDelta(Delta.newBuilder().setFrom(interval.from()).setTo(interval.to())
                        .addAllNamespaces(t.namespaces()).addAllRecords(t.records()))
                .build();
    }
}
