package orbitkv.inventory.codec;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.wire.Delta;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.Record;
import orbitkv.inventory.wire.RecordOp;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.wire.Uuid;

/**
 * Exact records to and from the v4 wire (PUB-9, SES-9, SES-10): {@link ResidenceRecord} ↔ wire
 * {@link Record} with a per-frame namespace table (dictionary encoding of the namespace only, with a
 * strict decoded-size bound). Encoding happens outside the inventory lock (BND-1). Decoding validates the
 * whole message before any record object is built: unknown enum → reject, a fixed64 above 2^63-1 →
 * integer overflow, sequence {@code >= 1} and inside the interval, namespace index in range, key 1..64 bytes,
 * records strictly increasing by {@code (StateKey, medium)}, decoded bytes within the bound.
 */
public final class FrameCodec {
    /** Decoded bytes of one record besides its key and namespace (the receiver's accounting unit). */
    public static final int RECORD_DECODED_FIXED_BYTES = 48;

    private static final Uuid WIDEST_UUID = Uuid.newBuilder().setMsb(-1).setLsb(-1).build();

    private FrameCodec() {}

    /** The namespace table and wire records of {@code records} (in their order). */
    public record EncodedRecords(List<ByteString> namespaces, List<Record> records) {}

    /** Encodes records with a namespace table in first-appearance order. */
    public static EncodedRecords encodeRecords(List<ResidenceRecord> records) {
        List<ByteString> table = new ArrayList<>();
        List<Record> out = new ArrayList<>(records.size());
        Namespace lastNs = null;
        java.util.HashMap<Namespace, Integer> index = new java.util.HashMap<>();
        int lastIndex = -1;
        for (ResidenceRecord r : records) {
            Namespace ns = r.key().namespace();
            if (!ns.equals(lastNs)) {
                Integer i = index.get(ns);
                if (i == null) {
                    i = table.size();
                    index.put(ns, i);
                    table.add(UnsafeByteOperations.unsafeWrap(ns.bytes()));
                }
                lastNs = ns;
                lastIndex = i;
            }
            out.add(Record.newBuilder()
                    .setNamespaceIndex(lastIndex)
                    .setKey(UnsafeByteOperations.unsafeWrap(r.key().key()))
                    .setMedium(toWire(r.medium()))
                    .setOp(r.isDelete() ? RecordOp.RECORD_OP_DELETE : RecordOp.RECORD_OP_PUT)
                    .setSequence(r.sequence())
                    .setSizeBytes(r.sizeBytes())
                    .build());
        }
        return new EncodedRecords(table, out);
    }

    /** The wire delta of one coalesced interval (DELTA-1). */
    public static Delta encodeDelta(Interval interval, List<ResidenceRecord> records) {
        EncodedRecords e = encodeRecords(records);
        return Delta.newBuilder().setFrom(interval.from()).setTo(interval.to())
                .addAllNamespaces(e.namespaces()).addAllRecords(e.records()).build();
    }

    /** Serialized size of the {@link SourceFrame} carrying {@code delta} (session id and frame number are fixed width). */
    public static int frameEncodedBytes(Delta delta) {
        return SourceFrame.newBuilder().setSessionId(WIDEST_UUID).setFrameNumber(Long.MAX_VALUE).setDelta(delta)
                .build().getSerializedSize();
    }

    /** Decoded bytes of records: {@link #RECORD_DECODED_FIXED_BYTES} + key + namespace per record. */
    public static long decodedBytes(List<ResidenceRecord> records) {
        long total = 0;
        for (ResidenceRecord r : records) {
            total += RECORD_DECODED_FIXED_BYTES + r.key().keyLength() + r.key().namespace().length();
        }
        return total;
    }

    /** Result of decoding. */
    public sealed interface Decoded<T> permits Decoded.Ok, Decoded.Rejected {
        record Ok<T>(T value) implements Decoded<T> {}

        record Rejected<T>(ErrorCause cause, String detail) implements Decoded<T> {}
    }

    /** A decoded delta: its interval and its records. */
    public record DecodedDelta(Interval interval, RecordBatch records) {
        public DecodedDelta {
            Objects.requireNonNull(interval, "interval must not be null");
            Objects.requireNonNull(records, "records must not be null");
        }
    }

    /** Decodes and validates a delta against {@code decodedBytesMax} (SES-9, SES-10, DELTA-1). */
    public static Decoded<DecodedDelta> decodeDelta(Delta delta, long decodedBytesMax) {
        Objects.requireNonNull(delta, "delta must not be null");
        return decodeDelta(delta.getFrom(), delta.getTo(), delta.getNamespacesList(), WireRecords.of(delta.getRecordsList()),
                decodedBytesMax);
    }

    /** {@link #decodeDelta(Delta, long)} of a delta's fields, however they were read. */
    public static Decoded<DecodedDelta> decodeDelta(long from, long to, List<ByteString> table, WireRecords records,
            long decodedBytesMax) {
        if (from < 0 || to < 0) {
            return reject(ErrorCause.INTEGER_OVERFLOW, "delta from/to exceed 2^63-1");
        }
        if (to <= from) {
            return reject(ErrorCause.MALFORMED_FRAME, "delta to (" + to + ") must be > from (" + from + ")");
        }
        Interval interval = new Interval(from, to);
        return switch (decodeRecords(table, records, interval, decodedBytesMax)) {
            case Decoded.Ok<RecordBatch> ok -> new Decoded.Ok<>(new DecodedDelta(interval, ok.value()));
            case Decoded.Rejected<RecordBatch> r -> reject(r.cause(), r.detail());
        };
    }

    /** {@link #decodeRecords(List, WireRecords, Interval, long)} of generated wire records. */
    public static Decoded<RecordBatch> decodeRecords(List<ByteString> table, List<Record> records,
            Interval within, long decodedBytesMax) {
        return decodeRecords(table, WireRecords.of(records), within, decodedBytesMax);
    }

    /**
     * Decodes and validates records with their namespace table (SES-9, SES-10): field widths and enums, the
     * namespace index, key length, sequence {@code >= 1} (and inside {@code within} when non-null), a delete's
     * size, the decoded-bytes bound (before the batch is built), then strict {@code (StateKey, medium)}
     * order. The first failing check, in that order, names the refusal; both decoders share this method.
     */
    public static Decoded<RecordBatch> decodeRecords(List<ByteString> table, WireRecords records,
            Interval within, long decodedBytesMax) {
        int n = records.count();
        if (table.size() > n) {
            return reject(ErrorCause.MALFORMED_FRAME, "namespace table has " + table.size() + " entries for " + n + " records");
        }
        for (int i = 0; i < table.size(); i++) {
            int len = table.get(i).size();
            if (len < 1 || len > Namespace.MAX_BYTES) {
                return reject(ErrorCause.MALFORMED_FRAME, "namespace " + i + " must be 1.." + Namespace.MAX_BYTES + " bytes, got " + len);
            }
        }
        long decoded = 0;
        for (int i = 0; i < n; i++) {
            String problem = problem(records, i, table.size());
            if (problem != null) {
                ErrorCause cause = problem.startsWith("unknown") ? ErrorCause.UNKNOWN_ENUM_VALUE
                        : problem.contains("2^63") ? ErrorCause.INTEGER_OVERFLOW : ErrorCause.MALFORMED_FRAME;
                return reject(cause, "record " + i + ": " + problem);
            }
            if (within != null && !within.contains(records.sequence(i))) {
                return reject(ErrorCause.MALFORMED_FRAME, "record " + i + ": sequence " + records.sequence(i) + " is outside " + within);
            }
            decoded += RECORD_DECODED_FIXED_BYTES + records.keyLength(i) + table.get(records.namespaceIndex(i)).size();
            if (decoded > decodedBytesMax) {
                return reject(ErrorCause.FRAME_TOO_LARGE, "decoded records exceed frameDecodedBytesMax (" + decodedBytesMax + ")");
            }
        }
        RecordBatch.Builder b = RecordBatch.builder(n);
        int[] batchNamespace = new int[table.size()]; // a repeated table entry maps to one batch namespace
        for (int i = 0; i < table.size(); i++) {
            batchNamespace[i] = b.namespace(new Namespace(table.get(i).toByteArray()));
        }
        for (int i = 0; i < n; i++) {
            records.addTo(b, i, batchNamespace[records.namespaceIndex(i)]);
        }
        RecordBatch batch = b.build();
        String disorder = orderProblem(batch);
        return disorder != null ? reject(ErrorCause.MALFORMED_FRAME, disorder) : new Decoded.Ok<>(batch);
    }

    /** The first break of strict {@code (StateKey, medium)} order in {@code batch}, or null. */
    public static String orderProblem(RecordBatch batch) {
        int i = batch.firstDisorder();
        return i < 0 ? null : "record " + i + " is not after record " + (i - 1) + " in (StateKey, medium) order";
    }

    /** Decoded bytes of a batch: {@link #RECORD_DECODED_FIXED_BYTES} + key + namespace per record. */
    public static long decodedBytes(RecordBatch records) {
        long total = 0;
        for (int i = 0; i < records.size(); i++) {
            total += RECORD_DECODED_FIXED_BYTES + records.keyLength(i) + records.namespace(i).length();
        }
        return total;
    }

    /** The first field-level problem of wire record {@code i}, or null. */
    private static String problem(WireRecords w, int i, int tableSize) {
        int medium = w.mediumValue(i);
        if (medium != 1 && medium != 2) {
            return "unknown medium value " + medium;
        }
        int op = w.opValue(i);
        if (op != 1 && op != 2) {
            return "unknown op value " + op;
        }
        int ns = w.namespaceIndex(i);
        if (ns < 0 || ns >= tableSize) {
            return "namespace_index " + Integer.toUnsignedString(ns) + " is not below the table size " + tableSize;
        }
        int keyLen = w.keyLength(i);
        if (keyLen < 1 || keyLen > StateKey.MAX_KEY_BYTES) {
            return "key must be 1.." + StateKey.MAX_KEY_BYTES + " bytes, got " + keyLen;
        }
        long sequence = w.sequence(i);
        if (sequence < 0) {
            return "sequence exceeds 2^63-1";
        }
        if (sequence < 1) {
            return "sequence must be >= 1, got 0";
        }
        long size = w.sizeBytes(i);
        if (size < 0) {
            return "size_bytes exceeds 2^63-1";
        }
        if (op == RecordOp.RECORD_OP_DELETE_VALUE && size != 0) {
            return "a delete carries size_bytes 0, got " + size;
        }
        return null;
    }

    private static <T> Decoded<T> reject(ErrorCause cause, String detail) {
        return new Decoded.Rejected<>(cause, detail);
    }

    static orbitkv.inventory.wire.Medium toWire(Medium m) {
        return m == Medium.DRAM ? orbitkv.inventory.wire.Medium.MEDIUM_DRAM : orbitkv.inventory.wire.Medium.MEDIUM_SSD;
    }
}
