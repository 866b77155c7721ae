package orbitkv.inventory.codec;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.WireFormat;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.wire.Delta;
import orbitkv.inventory.wire.Record;
import orbitkv.inventory.wire.RecordOp;
import orbitkv.inventory.wire.SnapshotPage;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.wire.Uuid;

/**
 * Writes a complete v4 {@code SourceFrame} carrying a {@code SnapshotPage} or a {@code Delta} straight from
 * {@link ResidenceRecord}s into one exactly sized array (PUB-9, SES-9, SES-12), with no wire message or
 * per-record object: the protobuf {@link CodedOutputStream} writes each field, its {@code computeXxxSize}
 * functions give every length prefix.
 *
 * <p>The bytes are identical to what the generated classes serialize for the same content: fields in
 * field-number order, proto3 defaults (0, empty, UNSPECIFIED) omitted, sub-messages that are set
 * ({@code session_id}, {@code view_id}, the body) always present even when empty, and the namespace table
 * in first-appearance order (as {@link FrameCodec#encodeRecords}). {@code SourceFrameEncoderProperties}
 * ({@code pageIsByteIdentical}, {@code deltaIsByteIdentical}) checks this against
 * {@code SourceFrame.newBuilder()...build().toByteArray()}.
 *
 * <p>The frame is encoded before it is numbered and returned as an {@link UnnumberedFrame}: its encoded
 * size is known up front for the credit ledger (SES-13), and numbering under the send lock only patches
 * the 8 fixed64 bytes of {@code frame_number} (see {@link UnnumberedFrame#frameNumberOffset}).
 */
public final class SourceFrameEncoder {
    static final int FRAME_SESSION_ID = SourceFrame.SESSION_ID_FIELD_NUMBER;
    static final int FRAME_NUMBER = SourceFrame.FRAME_NUMBER_FIELD_NUMBER;
    static final int FRAME_SNAPSHOT_PAGE = SourceFrame.SNAPSHOT_PAGE_FIELD_NUMBER;
    static final int FRAME_DELTA = SourceFrame.DELTA_FIELD_NUMBER;
    static final int UUID_MSB = Uuid.MSB_FIELD_NUMBER;
    static final int UUID_LSB = Uuid.LSB_FIELD_NUMBER;
    static final int PAGE_VIEW_ID = SnapshotPage.VIEW_ID_FIELD_NUMBER;
    static final int PAGE_ORDINAL = SnapshotPage.PAGE_ORDINAL_FIELD_NUMBER;
    static final int PAGE_NAMESPACES = SnapshotPage.NAMESPACES_FIELD_NUMBER;
    static final int PAGE_RECORDS = SnapshotPage.RECORDS_FIELD_NUMBER;
    static final int DELTA_FROM = Delta.FROM_FIELD_NUMBER;
    static final int DELTA_TO = Delta.TO_FIELD_NUMBER;
    static final int DELTA_NAMESPACES = Delta.NAMESPACES_FIELD_NUMBER;
    static final int DELTA_RECORDS = Delta.RECORDS_FIELD_NUMBER;
    static final int RECORD_NAMESPACE_INDEX = Record.NAMESPACE_INDEX_FIELD_NUMBER;
    static final int RECORD_KEY = Record.KEY_FIELD_NUMBER;
    static final int RECORD_MEDIUM = Record.MEDIUM_FIELD_NUMBER;
    static final int RECORD_OP = Record.OP_FIELD_NUMBER;
    static final int RECORD_SEQUENCE = Record.SEQUENCE_FIELD_NUMBER;
    static final int RECORD_SIZE_BYTES = Record.SIZE_BYTES_FIELD_NUMBER;
    /** Wire numbers of the enums (the proto's MEDIUM_DRAM / MEDIUM_SSD, RECORD_OP_PUT / RECORD_OP_DELETE). */
    static final int MEDIUM_DRAM = orbitkv.inventory.wire.Medium.MEDIUM_DRAM_VALUE;
    static final int MEDIUM_SSD = orbitkv.inventory.wire.Medium.MEDIUM_SSD_VALUE;
    static final int OP_PUT = RecordOp.RECORD_OP_PUT_VALUE;
    static final int OP_DELETE = RecordOp.RECORD_OP_DELETE_VALUE;
    /** Encoded before numbering; valid (non-zero, so present) and overwritten by {@link UnnumberedFrame#number}. */
    static final long FRAME_NUMBER_PLACEHOLDER = Long.MAX_VALUE;

    private SourceFrameEncoder() {}

    /** The encoded {@code SourceFrame{session_id, frame_number, snapshot_page{view_id, page_ordinal, namespaces, records}}} (SNAP-2). */
    public static UnnumberedFrame page(UUID sessionId, UUID viewId, long pageOrdinal, List<ResidenceRecord> records) {
        Objects.requireNonNull(sessionId, "sessionId must not be null");
        Objects.requireNonNull(viewId, "viewId must not be null");
        Table t = new Table(records);
        long body = uuidFieldBytes(PAGE_VIEW_ID, viewId.getMostSignificantBits(), viewId.getLeastSignificantBits())
                + fixed64FieldBytes(PAGE_ORDINAL, pageOrdinal) + t.bytes(PAGE_NAMESPACES, PAGE_RECORDS);
        int bodyBytes = fits("snapshot page", body);
        Writer w = new Writer(sessionId, FRAME_SNAPSHOT_PAGE, bodyBytes);
        w.uuid(PAGE_VIEW_ID, viewId.getMostSignificantBits(), viewId.getLeastSignificantBits());
        w.fixed64(PAGE_ORDINAL, pageOrdinal);
        t.write(w, PAGE_NAMESPACES, PAGE_RECORDS);
        return w.finish(SourceFrame.BodyCase.SNAPSHOT_PAGE);
    }

    /** The encoded {@code SourceFrame{session_id, frame_number, delta{from, to, namespaces, records}}} (DELTA-1). */
    public static UnnumberedFrame delta(UUID sessionId, Interval interval, List<ResidenceRecord> records) {
        Objects.requireNonNull(sessionId, "sessionId must not be null");
        Table t = new Table(records);
        int bodyBytes = fits("delta", deltaBodyBytes(interval, t));
        Writer w = new Writer(sessionId, FRAME_DELTA, bodyBytes);
        w.fixed64(DELTA_FROM, interval.from());
        w.fixed64(DELTA_TO, interval.to());
        t.write(w, DELTA_NAMESPACES, DELTA_RECORDS);
        return w.finish(SourceFrame.BodyCase.DELTA);
    }

    /**
     * Encoded size of the {@code SourceFrame} that would carry this delta with the widest session id (both
     * halves non-zero, as a random UUID almost always is) and any frame number: the size the interval
     * partitioner holds against {@code frameEncodedBytesMax} (DELTA-3). Computed without encoding; may
     * exceed {@link Integer#MAX_VALUE} for a list no frame could carry.
     */
    public static long deltaFrameEncodedBytes(Interval interval, List<ResidenceRecord> records) {
        long body = deltaBodyBytes(interval, new Table(records));
        return frameBytes(uuidBodyBytes(-1, -1), FRAME_DELTA, body);
    }

    private static long deltaBodyBytes(Interval interval, Table t) {
        Objects.requireNonNull(interval, "interval must not be null");
        return fixed64FieldBytes(DELTA_FROM, interval.from()) + fixed64FieldBytes(DELTA_TO, interval.to())
                + t.bytes(DELTA_NAMESPACES, DELTA_RECORDS);
    }

    private static long frameBytes(int sessionUuidBodyBytes, int bodyField, long bodyBytes) {
        return messageFieldBytes(FRAME_SESSION_ID, sessionUuidBodyBytes)
                + CodedOutputStream.computeFixed64Size(FRAME_NUMBER, FRAME_NUMBER_PLACEHOLDER)
                + CodedOutputStream.computeTagSize(bodyField) + varint32Bytes(bodyBytes) + bodyBytes;
    }

    private static int fits(String what, long bytes) {
        // Leaves room for the frame's own header (session id, frame number, body tag and length).
        if (bytes > Integer.MAX_VALUE - 64) {
            throw new IllegalArgumentException(what + " of " + bytes + " encoded bytes exceeds one array (2^31-1 bytes)");
        }
        return (int) bytes;
    }

    static int uuidBodyBytes(long msb, long lsb) {
        return (int) (fixed64FieldBytes(UUID_MSB, msb) + fixed64FieldBytes(UUID_LSB, lsb));
    }

    private static long uuidFieldBytes(int field, long msb, long lsb) {
        return messageFieldBytes(field, uuidBodyBytes(msb, lsb));
    }

    /** A proto3 fixed64 is omitted when 0. */
    static long fixed64FieldBytes(int field, long v) {
        return v == 0 ? 0 : CodedOutputStream.computeFixed64Size(field, v);
    }

    private static long messageFieldBytes(int field, long bodyBytes) {
        return CodedOutputStream.computeTagSize(field) + varint32Bytes(bodyBytes) + bodyBytes;
    }

    private static int varint32Bytes(long length) {
        return length > Integer.MAX_VALUE ? 5 : CodedOutputStream.computeUInt32SizeNoTag((int) length);
    }

    /** The body size of one wire Record (generated code's order and default omission). */
    private static int recordBodyBytes(int namespaceIndex, ResidenceRecord r) {
        int keyLength = r.key().keyLength();
        return (namespaceIndex == 0 ? 0 : CodedOutputStream.computeUInt32Size(RECORD_NAMESPACE_INDEX, namespaceIndex))
                + CodedOutputStream.computeTagSize(RECORD_KEY) + CodedOutputStream.computeUInt32SizeNoTag(keyLength) + keyLength
                + CodedOutputStream.computeEnumSize(RECORD_MEDIUM, medium(r.medium()))
                + CodedOutputStream.computeEnumSize(RECORD_OP, op(r))
                + (int) fixed64FieldBytes(RECORD_SEQUENCE, r.sequence())
                + (int) fixed64FieldBytes(RECORD_SIZE_BYTES, r.sizeBytes());
    }

    private static int medium(Medium m) {
        return m == Medium.DRAM ? MEDIUM_DRAM : MEDIUM_SSD;
    }

    private static int op(ResidenceRecord r) {
        return r.isDelete() ? OP_DELETE : OP_PUT;
    }

    /**
     * The frame's namespace table in first-appearance order and each record's index into it (PUB-9:
     * dictionary encoding of the namespace only). One int per record, no per-record object.
     */
    private static final class Table {
        private final List<ResidenceRecord> records;
        private final List<Namespace> namespaces = new ArrayList<>();
        private final int[] indexOf;
        private final int[] bodyBytes; // each record's encoded body, filled by bytes()
        private Map<Namespace, Integer> index; // only once a second namespace appears

        Table(List<ResidenceRecord> records) {
            this.records = Objects.requireNonNull(records, "records must not be null");
            indexOf = new int[records.size()];
            bodyBytes = new int[indexOf.length];
            Namespace last = null;
            int lastIndex = -1;
            for (int i = 0; i < indexOf.length; i++) {
                Namespace ns = records.get(i).key().namespace();
                if (ns != last && !ns.equals(last)) {
                    lastIndex = indexOf(ns);
                    last = ns;
                }
                indexOf[i] = lastIndex;
            }
        }

        private int indexOf(Namespace ns) {
            if (namespaces.isEmpty()) {
                namespaces.add(ns);
                return 0;
            }
            if (index == null) {
                index = new HashMap<>();
                index.put(namespaces.getFirst(), 0);
            }
            Integer i = index.putIfAbsent(ns, namespaces.size());
            if (i == null) {
                namespaces.add(ns);
                return namespaces.size() - 1;
            }
            return i;
        }

        /** Encoded bytes of the repeated namespaces and records fields. */
        long bytes(int namespacesField, int recordsField) {
            long total = 0;
            for (Namespace ns : namespaces) {
                total += CodedOutputStream.computeTagSize(namespacesField) + CodedOutputStream.computeUInt32SizeNoTag(ns.length())
                        + ns.length();
            }
            int recordTag = CodedOutputStream.computeTagSize(recordsField);
            for (int i = 0; i < indexOf.length; i++) {
                int body = recordBodyBytes(indexOf[i], records.get(i));
                bodyBytes[i] = body;
                total += recordTag + CodedOutputStream.computeUInt32SizeNoTag(body) + body;
            }
            return total;
        }

        /** Writes the table and the records; {@link #bytes} must have run (it fills the record sizes). */
        void write(Writer w, int namespacesField, int recordsField) {
            byte[] scratch = w.scratch;
            for (Namespace ns : namespaces) {
                w.bytes(namespacesField, scratch, ns.copyInto(scratch, 0));
            }
            for (int i = 0; i < indexOf.length; i++) {
                ResidenceRecord r = records.get(i);
                w.messageHeader(recordsField, bodyBytes[i]);
                w.uint32(RECORD_NAMESPACE_INDEX, indexOf[i]);
                w.bytes(RECORD_KEY, scratch, r.key().copyKeyInto(scratch, 0));
                w.enumValue(RECORD_MEDIUM, medium(r.medium()));
                w.enumValue(RECORD_OP, op(r));
                w.fixed64(RECORD_SEQUENCE, r.sequence());
                w.fixed64(RECORD_SIZE_BYTES, r.sizeBytes());
            }
        }
    }

    /** Writes one frame into an exactly sized array: the header at construction, the body by field. */
    private static final class Writer {
        final byte[] scratch = new byte[Math.max(Namespace.MAX_BYTES, StateKey.MAX_KEY_BYTES)];
        private final byte[] out;
        private final CodedOutputStream cos;
        private final int frameNumberOffset;

        Writer(UUID sessionId, int bodyField, int bodyBytes) {
            long msb = sessionId.getMostSignificantBits();
            long lsb = sessionId.getLeastSignificantBits();
            int sessionBody = uuidBodyBytes(msb, lsb);
            out = new byte[fits("frame", frameBytes(sessionBody, bodyField, bodyBytes))];
            cos = CodedOutputStream.newInstance(out);
            try {
                cos.writeTag(FRAME_SESSION_ID, WireFormat.WIRETYPE_LENGTH_DELIMITED);
                cos.writeUInt32NoTag(sessionBody);
                fixed64(UUID_MSB, msb);
                fixed64(UUID_LSB, lsb);
                cos.writeTag(FRAME_NUMBER, WireFormat.WIRETYPE_FIXED64);
                frameNumberOffset = cos.getTotalBytesWritten();
                cos.writeFixed64NoTag(FRAME_NUMBER_PLACEHOLDER);
                messageHeader(bodyField, bodyBytes);
            } catch (IOException e) {
                throw overflow(e);
            }
        }

        void uuid(int field, long msb, long lsb) {
            messageHeader(field, uuidBodyBytes(msb, lsb));
            fixed64(UUID_MSB, msb);
            fixed64(UUID_LSB, lsb);
        }

        void messageHeader(int field, int bodyBytes) {
            try {
                cos.writeTag(field, WireFormat.WIRETYPE_LENGTH_DELIMITED);
                cos.writeUInt32NoTag(bodyBytes);
            } catch (IOException e) {
                throw overflow(e);
            }
        }

        void fixed64(int field, long v) {
            if (v != 0) {
                try {
                    cos.writeFixed64(field, v);
                } catch (IOException e) {
                    throw overflow(e);
                }
            }
        }

        void uint32(int field, int v) {
            if (v != 0) {
                try {
                    cos.writeUInt32(field, v);
                } catch (IOException e) {
                    throw overflow(e);
                }
            }
        }

        void enumValue(int field, int v) {
            try {
                cos.writeEnum(field, v);
            } catch (IOException e) {
                throw overflow(e);
            }
        }

        /** A bytes field from {@code src[0, length)}; never empty here (keys and namespaces are >= 1 byte). */
        void bytes(int field, byte[] src, int length) {
            try {
                cos.writeByteArray(field, src, 0, length);
            } catch (IOException e) {
                throw overflow(e);
            }
        }

        UnnumberedFrame finish(SourceFrame.BodyCase body) {
            if (cos.spaceLeft() != 0) {
                throw new IllegalStateException("frame sized " + out.length + " bytes but " + cos.spaceLeft() + " left unwritten");
            }
            return new UnnumberedFrame(out, frameNumberOffset, body);
        }

        /** Writing past the computed size is a sizing bug, never an I/O condition. */
        private static RuntimeException overflow(IOException e) {
            return new IllegalStateException("frame outgrew its computed size", new UncheckedIOException(e));
        }
    }
}
