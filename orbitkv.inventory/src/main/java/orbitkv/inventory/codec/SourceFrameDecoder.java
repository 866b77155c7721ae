package orbitkv.inventory.codec;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import java.io.IOException;
import com.google.protobuf.WireFormat;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.wire.Delta;
import orbitkv.inventory.wire.SnapshotPage;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.wire.Uuid;

/**
 * Reads a snapshot page or delta {@link SourceFrame} (SNAP-2, DELTA-1) straight from its bytes into a
 * {@link RecordBatch} under the same checks as the generated path (SES-9 widths and enums, SES-10 decoded bound),
 * with protobuf's {@link CodedInputStream} and no message object per record (issue 5: the generated
 * parser builds a {@code Record} and a key {@code ByteString} per record, which dominated the requester's
 * bootstrap cost). The generated classes remain the schema and decode every other frame.
 *
 * <p>Equivalence with the generated parser followed by {@link FrameCodec#decodeRecords} is by
 * construction and is checked by a property test: this reader handles only the plain encoding, where every
 * singular field appears at most once and every field is one the schema declares with its declared wire
 * type. Anything else (an unknown field, a repeated singular field, a control frame, bytes the reader
 * cannot parse) answers {@link Result.UseGenerated}, and the caller parses with the generated classes,
 * which then define the outcome (merge semantics, unknown fields kept, the parse error named).
 */
public final class SourceFrameDecoder {
    private static final int SESSION_ID = tag(1, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int FRAME_NUMBER = tag(2, WireFormat.WIRETYPE_FIXED64);
    private static final int SNAPSHOT_PAGE = tag(12, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int DELTA = tag(14, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int UUID_MSB = tag(1, WireFormat.WIRETYPE_FIXED64);
    private static final int UUID_LSB = tag(2, WireFormat.WIRETYPE_FIXED64);
    private static final int PAGE_VIEW_ID = tag(1, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int PAGE_ORDINAL = tag(2, WireFormat.WIRETYPE_FIXED64);
    private static final int DELTA_FROM = tag(1, WireFormat.WIRETYPE_FIXED64);
    private static final int DELTA_TO = tag(2, WireFormat.WIRETYPE_FIXED64);
    private static final int NAMESPACES = tag(3, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int RECORDS = tag(4, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int R_NAMESPACE_INDEX = tag(1, WireFormat.WIRETYPE_VARINT);
    private static final int R_KEY = tag(2, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int R_MEDIUM = tag(3, WireFormat.WIRETYPE_VARINT);
    private static final int R_OP = tag(4, WireFormat.WIRETYPE_VARINT);
    private static final int R_SEQUENCE = tag(5, WireFormat.WIRETYPE_FIXED64);
    private static final int R_SIZE = tag(6, WireFormat.WIRETYPE_FIXED64);

    /** Encoded bytes of a typical record (32-byte key): sizes the columns once for most frames; they grow if needed. */
    private static final int EXPECTED_RECORD_BYTES = 56;

    private SourceFrameDecoder() {}

    private static int tag(int field, int wireType) {
        return field << 3 | wireType;
    }

    /** The outcome of {@link #decode}. */
    public sealed interface Result {
        /**
         * A page or delta read directly: {@code header} is the frame without namespaces and records (session
         * id, frame number, view id and ordinal, or from and to), exactly as the generated parser would
         * populate those fields; {@code page} (for a page) or {@code delta} (for a delta) is what
         * {@link FrameCodec} decides about the records.
         */
        record Read(SourceFrame header, FrameCodec.Decoded<RecordBatch> page, FrameCodec.Decoded<FrameCodec.DecodedDelta> delta)
                implements Result {
            public Read {
                Objects.requireNonNull(header, "header must not be null");
                if ((page == null) == (delta == null)) {
                    throw new IllegalArgumentException("exactly one of page and delta is read");
                }
            }
        }

        /** Not a plain page or delta: parse with the generated classes. */
        record UseGenerated() implements Result {}
    }

    private static final Result.UseGenerated USE_GENERATED = new Result.UseGenerated();

    /** Thrown internally for anything outside the plain encoding; never escapes. */
    private static final class NotPlain extends Exception {
        NotPlain() {
            super(null, null, false, false);
        }
    }

    private static final NotPlain NOT_PLAIN = new NotPlain();

    /** Decodes {@code frame} (its whole encoded bytes, already within the encoded-size bound). */
    public static Result decode(byte[] frame, long decodedBytesMax) {
        try {
            return read(frame, decodedBytesMax);
        } catch (NotPlain | IOException e) { // an array decoder only throws InvalidProtocolBufferException
            return USE_GENERATED;
        }
    }

    private static Result read(byte[] frame, long decodedBytesMax) throws NotPlain, IOException {
        CodedInputStream in = CodedInputStream.newInstance(frame);
        SourceFrame.Builder header = SourceFrame.newBuilder();
        boolean session = false;
        boolean number = false;
        Body body = null;
        int tag;
        while ((tag = in.readTag()) != 0) {
            if (tag == SESSION_ID && !session) {
                header.setSessionId(uuid(in));
                session = true;
            } else if (tag == FRAME_NUMBER && !number) {
                header.setFrameNumber(in.readFixed64());
                number = true;
            } else if ((tag == SNAPSHOT_PAGE || tag == DELTA) && body == null) {
                body = body(frame, in, tag == SNAPSHOT_PAGE);
            } else {
                throw NOT_PLAIN;
            }
        }
        if (body == null) {
            throw NOT_PLAIN; // a control frame or an empty one: the generated classes decide
        }
        if (body.page) {
            SnapshotPage.Builder p = SnapshotPage.newBuilder().setPageOrdinal(body.first);
            if (body.viewId != null) {
                p.setViewId(body.viewId);
            }
            header.setSnapshotPage(p);
            return new Result.Read(header.build(), FrameCodec.decodeRecords(body.namespaces, body.records, null, decodedBytesMax), null);
        }
        header.setDelta(Delta.newBuilder().setFrom(body.first).setTo(body.second));
        return new Result.Read(header.build(), null,
                FrameCodec.decodeDelta(body.first, body.second, body.namespaces, body.records, decodedBytesMax));
    }

    /** The fields of a page (view id, ordinal) or a delta (from, to) with its namespace table and records. */
    private static final class Body {
        final boolean page;
        Uuid viewId;
        long first;
        long second;
        final List<ByteString> namespaces = new ArrayList<>(1);
        final Columns records;

        Body(boolean page, int frameBytes) {
            this.page = page;
            this.records = new Columns(frameBytes / EXPECTED_RECORD_BYTES + 16);
        }
    }

    private static Body body(byte[] frame, CodedInputStream in, boolean page) throws NotPlain, IOException {
        int limit = in.pushLimit(in.readRawVarint32());
        Body b = new Body(page, frame.length);
        boolean first = false;
        boolean second = false;
        int tag;
        while ((tag = in.readTag()) != 0) {
            if (page && tag == PAGE_VIEW_ID && b.viewId == null) {
                b.viewId = uuid(in);
            } else if (tag == (page ? PAGE_ORDINAL : DELTA_FROM) && !first) {
                b.first = in.readFixed64();
                first = true;
            } else if (!page && tag == DELTA_TO && !second) {
                b.second = in.readFixed64();
                second = true;
            } else if (tag == NAMESPACES) {
                int len = in.readRawVarint32();
                int at = in.getTotalBytesRead();
                in.skipRawBytes(len);
                b.namespaces.add(ByteString.copyFrom(frame, at, len));
            } else if (tag == RECORDS) {
                record(in, b.records);
            } else {
                throw NOT_PLAIN;
            }
        }
        in.popLimit(limit);
        b.records.frame = frame;
        return b;
    }

    private static Uuid uuid(CodedInputStream in) throws NotPlain, IOException {
        int limit = in.pushLimit(in.readRawVarint32());
        Uuid.Builder u = Uuid.newBuilder();
        boolean msb = false;
        boolean lsb = false;
        int tag;
        while ((tag = in.readTag()) != 0) {
            if (tag == UUID_MSB && !msb) {
                u.setMsb(in.readFixed64());
                msb = true;
            } else if (tag == UUID_LSB && !lsb) {
                u.setLsb(in.readFixed64());
                lsb = true;
            } else {
                throw NOT_PLAIN;
            }
        }
        in.popLimit(limit);
        return u.build();
    }

    private static void record(CodedInputStream in, Columns c) throws NotPlain, IOException {
        int limit = in.pushLimit(in.readRawVarint32());
        int i = c.append();
        int seen = 0;
        int tag;
        while ((tag = in.readTag()) != 0) {
            int field = tag >>> 3;
            int bit = 1 << field;
            if (field > 6 || (seen & bit) != 0) {
                throw NOT_PLAIN;
            }
            seen |= bit;
            if (tag == R_NAMESPACE_INDEX) {
                c.namespaceIndex[i] = in.readUInt32();
            } else if (tag == R_KEY) {
                int len = in.readRawVarint32();
                c.keyOffset[i] = in.getTotalBytesRead();
                c.keyLength[i] = len;
                in.skipRawBytes(len);
            } else if (tag == R_MEDIUM) {
                c.medium[i] = in.readEnum();
            } else if (tag == R_OP) {
                c.op[i] = in.readEnum();
            } else if (tag == R_SEQUENCE) {
                c.sequence[i] = in.readFixed64();
            } else if (tag == R_SIZE) {
                c.size[i] = in.readFixed64();
            } else {
                throw NOT_PLAIN;
            }
        }
        in.popLimit(limit);
    }

    /** Raw record fields as read; absent fields keep protobuf's defaults (0, empty key). */
    private static final class Columns implements WireRecords {
        byte[] frame;
        int count;
        int[] namespaceIndex;
        int[] keyOffset;
        int[] keyLength;
        int[] medium;
        int[] op;
        long[] sequence;
        long[] size;

        Columns(int capacity) {
            namespaceIndex = new int[capacity];
            keyOffset = new int[capacity];
            keyLength = new int[capacity];
            medium = new int[capacity];
            op = new int[capacity];
            sequence = new long[capacity];
            size = new long[capacity];
        }

        int append() {
            if (count == namespaceIndex.length) {
                int n = count * 2;
                namespaceIndex = Arrays.copyOf(namespaceIndex, n);
                keyOffset = Arrays.copyOf(keyOffset, n);
                keyLength = Arrays.copyOf(keyLength, n);
                medium = Arrays.copyOf(medium, n);
                op = Arrays.copyOf(op, n);
                sequence = Arrays.copyOf(sequence, n);
                size = Arrays.copyOf(size, n);
            }
            return count++;
        }

        @Override
        public int count() {
            return count;
        }

        @Override
        public int namespaceIndex(int i) {
            return namespaceIndex[i];
        }

        @Override
        public int mediumValue(int i) {
            return medium[i];
        }

        @Override
        public int opValue(int i) {
            return op[i];
        }

        @Override
        public long sequence(int i) {
            return sequence[i];
        }

        @Override
        public long sizeBytes(int i) {
            return size[i];
        }

        @Override
        public int keyLength(int i) {
            return keyLength[i];
        }

        @Override
        public void addTo(RecordBatch.Builder batch, int i, int namespace) {
            batch.add(namespace, frame, keyOffset[i], keyLength[i], WireRecords.medium(medium[i]),
                    op[i] == orbitkv.inventory.wire.RecordOp.RECORD_OP_DELETE_VALUE, sequence[i], size[i]);
        }
    }
}
