package orbitkv.conformance.inventory;

import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.List;
import orbitkv.inventory.CoalescedInterval;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.wire.Delta;
import orbitkv.inventory.wire.Medium;
import orbitkv.inventory.wire.Record;
import orbitkv.inventory.wire.RecordOp;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.wire.Uuid;

/**
 * The conformance suite's own encoding of a coalesced interval as a v4 {@code SourceFrame} (from the
 * proto alone, independent of the implementation's codec), used to check the frame bounds (SES-10).
 */
final class WireFrames {
    private WireFrames() {}

    static int frameBytes(CoalescedInterval ci) {
        List<Namespace> table = new ArrayList<>();
        Delta.Builder d = Delta.newBuilder().setFrom(ci.interval().from()).setTo(ci.interval().to());
        for (ResidenceRecord r : ci.records()) {
            int index = table.indexOf(r.key().namespace());
            if (index < 0) {
                index = table.size();
                table.add(r.key().namespace());
                d.addNamespaces(ByteString.copyFrom(r.key().namespace().bytes()));
            }
            d.addRecords(Record.newBuilder().setNamespaceIndex(index).setKey(ByteString.copyFrom(r.key().key()))
                    .setMedium(r.medium() == orbitkv.inventory.Medium.DRAM ? Medium.MEDIUM_DRAM : Medium.MEDIUM_SSD)
                    .setOp(r.isDelete() ? RecordOp.RECORD_OP_DELETE : RecordOp.RECORD_OP_PUT)
                    .setSequence(r.sequence()).setSizeBytes(r.sizeBytes()));
        }
        return SourceFrame.newBuilder().setSessionId(Uuid.newBuilder().setMsb(-1).setLsb(-1)).setFrameNumber(Long.MAX_VALUE)
                .setDelta(d).build().getSerializedSize();
    }

    /** Decoded bytes per the documented receiver formula: 48 + key + namespace per record. */
    static long decodedBytes(CoalescedInterval ci) {
        long total = 0;
        for (ResidenceRecord r : ci.records()) {
            total += 48 + r.key().keyLength() + r.key().namespace().length();
        }
        return total;
    }
}
