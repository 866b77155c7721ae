package orbitkv.inventory.codec;

import com.google.protobuf.ByteString;
import java.util.List;
import orbitkv.inventory.Medium;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.wire.Record;
import orbitkv.inventory.wire.RecordOp;

/**
 * The records of one frame as read from the wire, before validation: raw field values exactly as
 * protobuf decodes them (an unknown enum value stays a number, a fixed64 above 2^63-1 stays negative).
 * Two readers produce it: the generated messages ({@link #of(List)}) and {@link SourceFrameDecoder}, which
 * reads the columns straight from the frame bytes. {@link FrameCodec#decodeRecords} validates either the
 * same way (SES-9, SES-10). Column storage is bounded by the frame: at most one record per two encoded bytes of
 * a frame already within {@code frameEncodedBytesMax}.
 */
public interface WireRecords {
    int count();

    int namespaceIndex(int i);

    int mediumValue(int i);

    int opValue(int i);

    long sequence(int i);

    long sizeBytes(int i);

    int keyLength(int i);

    /** Appends record {@code i}, already validated, to {@code batch} with batch namespace {@code namespace}. */
    void addTo(RecordBatch.Builder batch, int i, int namespace);

    /** A view of generated wire records. */
    static WireRecords of(List<Record> records) {
        return new WireRecords() {
            private final byte[] key = new byte[orbitkv.inventory.StateKey.MAX_KEY_BYTES];

            @Override
            public int count() {
                return records.size();
            }

            @Override
            public int namespaceIndex(int i) {
                return records.get(i).getNamespaceIndex();
            }

            @Override
            public int mediumValue(int i) {
                return records.get(i).getMediumValue();
            }

            @Override
            public int opValue(int i) {
                return records.get(i).getOpValue();
            }

            @Override
            public long sequence(int i) {
                return records.get(i).getSequence();
            }

            @Override
            public long sizeBytes(int i) {
                return records.get(i).getSizeBytes();
            }

            @Override
            public int keyLength(int i) {
                return records.get(i).getKey().size();
            }

            @Override
            public void addTo(RecordBatch.Builder batch, int i, int namespace) {
                Record w = records.get(i);
                ByteString k = w.getKey();
                k.copyTo(key, 0);
                batch.add(namespace, key, 0, k.size(), medium(w.getMediumValue()), w.getOpValue() == RecordOp.RECORD_OP_DELETE_VALUE,
                        w.getSequence(), w.getSizeBytes());
            }
        };
    }

    /** The contract medium of a validated wire medium value. */
    static Medium medium(int value) {
        return value == orbitkv.inventory.wire.Medium.MEDIUM_DRAM_VALUE ? Medium.DRAM : Medium.SSD;
    }
}
