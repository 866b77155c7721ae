package orbitkv.inventory.codec;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.wire.Delta;
import orbitkv.inventory.wire.Record;
import orbitkv.inventory.wire.SnapshotPage;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.wire.Uuid;

/**
 * Reads a snapshot page or delta {@link SourceFrame} (SNAP-2, DELTA-1) straight from its bytes into a
 * {@link RecordBatch} under the same checks as the generated path (SES-9 widths and enums, SES-10 decoded bound),
 * with protobuf's {@link CodedInputStream} for the frame and body and by hand for each record's fields, and no
 * message object per record (issue 5: the generated
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
    private static final int SESSION_ID = tag(SourceFrame.SESSION_ID_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int FRAME_NUMBER = tag(SourceFrame.FRAME_NUMBER_FIELD_NUMBER, WireFormat.WIRETYPE_FIXED64);
    private static final int SNAPSHOT_PAGE = tag(SourceFrame.SNAPSHOT_PAGE_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int DELTA = tag(SourceFrame.DELTA_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int UUID_MSB = tag(Uuid.MSB_FIELD_NUMBER, WireFormat.WIRETYPE_FIXED64);
    private static final int UUID_LSB = tag(Uuid.LSB_FIELD_NUMBER, WireFormat.WIRETYPE_FIXED64);
    private static final int PAGE_VIEW_ID = tag(SnapshotPage.VIEW_ID_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int PAGE_ORDINAL = tag(SnapshotPage.PAGE_ORDINAL_FIELD_NUMBER, WireFormat.WIRETYPE_FIXED64);
    private static final int DELTA_FROM = tag(Delta.FROM_FIELD_NUMBER, WireFormat.WIRETYPE_FIXED64);
    private static final int DELTA_TO = tag(Delta.TO_FIELD_NUMBER, WireFormat.WIRETYPE_FIXED64);
    // Pages and deltas share these numbers (Delta.NAMESPACES_FIELD_NUMBER, Delta.RECORDS_FIELD_NUMBER).
    private static final int NAMESPACES = tag(SnapshotPage.NAMESPACES_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    private static final int RECORDS = tag(SnapshotPage.RECORDS_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
    // Record field tags, written as constant expressions because the record loop switches on them.
    private static final int R_NAMESPACE_INDEX = Record.NAMESPACE_INDEX_FIELD_NUMBER << 3 | WireFormat.WIRETYPE_VARINT;
    private static final int R_KEY = Record.KEY_FIELD_NUMBER << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED;
    private static final int R_MEDIUM = Record.MEDIUM_FIELD_NUMBER << 3 | WireFormat.WIRETYPE_VARINT;
    private static final int R_OP = Record.OP_FIELD_NUMBER << 3 | WireFormat.WIRETYPE_VARINT;
    private static final int R_SEQUENCE = Record.SEQUENCE_FIELD_NUMBER << 3 | WireFormat.WIRETYPE_FIXED64;
    private static final int R_SIZE = Record.SIZE_BYTES_FIELD_NUMBER << 3 | WireFormat.WIRETYPE_FIXED64;

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
                record(frame, in, b.records);
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

    /**
     * One {@code Record} of the page or delta: its length through {@code in} (which also checks that the record
     * lies inside the body and the frame), its fields straight from {@code frame}. Record fields are the hot
     * loop of a bootstrap (protobuf's varint reads were a quarter of decoding: BootstrapStageBenchmark.decode,
     * 64 → 45 ms per 1,000,000 records); reading them by hand takes exactly the values {@link CodedInputStream}
     * would read and declines (not plain) whatever it would refuse, so the generated parser names the error.
     */
    private static void record(byte[] frame, CodedInputStream in, Columns c) throws NotPlain, IOException {
        int length = in.readRawVarint32();
        int p = in.getTotalBytesRead();
        in.skipRawBytes(length); // a negative length or one past the body's limit throws: the generated parser decides
        int end = p + length;
        int i = c.append();
        int seen = 0;
        while (p < end) {
            int tag = frame[p++]; // every declared record tag is one byte; a longer or unknown tag is not plain
            int bit = tag > 0 && tag < 0x40 ? 1 << (tag >>> 3) : 0;
            if (bit == 0 || (seen & bit) != 0) {
                throw NOT_PLAIN;
            }
            seen |= bit;
            if (tag == R_SEQUENCE || tag == R_SIZE) {
                if (end - p < 8) {
                    throw NOT_PLAIN;
                }
                long v = (long) LE64.get(frame, p);
                p += 8;
                if (tag == R_SEQUENCE) {
                    c.sequence[i] = v;
                } else {
                    c.size[i] = v;
                }
                continue;
            }
            int v;
            if (p < end && frame[p] >= 0) {
                v = frame[p++];
            } else {
                long r = varint32(frame, p, end);
                v = (int) r;
                p = (int) (r >>> 32);
            }
            switch (tag) {
                case R_NAMESPACE_INDEX -> c.namespaceIndex[i] = v;
                case R_KEY -> {
                    if (v < 0 || v > end - p) {
                        throw NOT_PLAIN;
                    }
                    c.keyOffset[i] = p;
                    c.keyLength[i] = v;
                    p += v;
                }
                case R_MEDIUM -> c.medium[i] = v;
                case R_OP -> c.op[i] = v;
                default -> throw NOT_PLAIN;
            }
        }
    }

    private static final VarHandle LE64 = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /**
     * {@link CodedInputStream#readRawVarint32()} at {@code frame[p]}, below {@code end}: the low 32 bits of a
     * varint of up to 10 bytes (a negative int32 is sent as 10). Returns the value in the low 32 bits and the
     * position after it in the high 32. An 11th byte or a varint running past {@code end} is not plain.
     */
    private static long varint32(byte[] frame, int p, int end) throws NotPlain {
        int value = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (p >= end) {
                throw NOT_PLAIN;
            }
            byte x = frame[p++];
            if (shift < 32) {
                value |= (x & 0x7f) << shift;
            }
            if (x >= 0) {
                return (long) p << 32 | (value & 0xffffffffL);
            }
        }
        throw NOT_PLAIN;
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
