package orbitkv.inventory.codec;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import java.util.List;
import java.util.function.UnaryOperator;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.wire.Delta;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.Record;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class FrameCodecTest {
    private static final Namespace A = Namespace.utf8("a");
    private static final Namespace B = Namespace.utf8("b");
    private static final List<ResidenceRecord> RECORDS = List.of(
            ResidenceRecord.put(new StateKey(A, new byte[] {1}), Medium.DRAM, 3, 10),
            ResidenceRecord.delete(new StateKey(A, new byte[] {1}), Medium.SSD, 4),
            ResidenceRecord.put(new StateKey(B, new byte[] {(byte) 0xff, 2}), Medium.SSD, 5, 0));
    private static final Interval IV = new Interval(2, 5);

    private static Delta mutated(UnaryOperator<Record.Builder> change, int index) {
        Delta d = FrameCodec.encodeDelta(IV, RECORDS);
        return d.toBuilder().setRecords(index, change.apply(d.getRecords(index).toBuilder())).build();
    }

    private static void assertRejected(Delta d, ErrorCause cause, String detail) {
        assertThat(FrameCodec.decodeDelta(d, 1 << 20)).isInstanceOfSatisfying(FrameCodec.Decoded.Rejected.class, r -> {
            assertThat(r.cause()).isEqualTo(cause);
            assertThat(r.detail()).contains(detail);
        });
    }

    @Test
    @DisplayName("PUB-9 exact records round-trip with a namespace table of distinct namespaces")
    void roundTrip() {
        Delta d = FrameCodec.encodeDelta(IV, RECORDS);
        assertThat(d.getNamespacesList()).containsExactly(ByteString.copyFromUtf8("a"), ByteString.copyFromUtf8("b"));
        assertThat(FrameCodec.decodeDelta(d, 1 << 20)).isEqualTo(new FrameCodec.Decoded.Ok<>(new FrameCodec.DecodedDelta(IV, RecordBatch.of(RECORDS))));
        assertThat(FrameCodec.decodedBytes(RECORDS)).isEqualTo(3 * FrameCodec.RECORD_DECODED_FIXED_BYTES + 1 + 1 + 1 + 1 + 2 + 1);
    }

    @Test
    @DisplayName("SES-9 unknown enum values reject the message")
    void unknownEnums() {
        assertRejected(mutated(b -> b.setMediumValue(7), 0), ErrorCause.UNKNOWN_ENUM_VALUE, "unknown medium value 7");
        assertRejected(mutated(b -> b.setMediumValue(0), 0), ErrorCause.UNKNOWN_ENUM_VALUE, "unknown medium value 0");
        assertRejected(mutated(b -> b.setOpValue(3), 1), ErrorCause.UNKNOWN_ENUM_VALUE, "unknown op value 3");
    }

    @Test
    @DisplayName("SES-9 DELTA-1 integer overflow, sequence 0 and sequences outside the interval reject the message")
    void sequences() {
        assertRejected(mutated(b -> b.setSequence(-1), 0), ErrorCause.INTEGER_OVERFLOW, "sequence exceeds 2^63-1");
        assertRejected(mutated(b -> b.setSequence(0), 0), ErrorCause.MALFORMED_FRAME, "sequence must be >= 1");
        assertRejected(mutated(b -> b.setSequence(2), 0), ErrorCause.MALFORMED_FRAME, "outside (2, 5]");
        assertRejected(mutated(b -> b.setSizeBytes(-5), 0), ErrorCause.INTEGER_OVERFLOW, "size_bytes exceeds 2^63-1");
        assertRejected(FrameCodec.encodeDelta(IV, RECORDS).toBuilder().setTo(-1).build(), ErrorCause.INTEGER_OVERFLOW, "from/to");
        assertRejected(FrameCodec.encodeDelta(IV, RECORDS).toBuilder().setTo(2).build(), ErrorCause.MALFORMED_FRAME, "must be > from");
    }

    @Test
    @DisplayName("SES-9 namespace index, key width, delete size and order are validated")
    void fields() {
        assertRejected(mutated(b -> b.setNamespaceIndex(2), 0), ErrorCause.MALFORMED_FRAME, "namespace_index 2");
        assertRejected(mutated(b -> b.setNamespaceIndex(-1), 0), ErrorCause.MALFORMED_FRAME, "namespace_index 4294967295");
        assertRejected(mutated(b -> b.setKey(ByteString.EMPTY), 0), ErrorCause.MALFORMED_FRAME, "key must be 1..64 bytes, got 0");
        assertRejected(mutated(b -> b.setKey(ByteString.copyFrom(new byte[65])), 0), ErrorCause.MALFORMED_FRAME, "got 65");
        assertRejected(mutated(b -> b.setSizeBytes(1), 1), ErrorCause.MALFORMED_FRAME, "a delete carries size_bytes 0");
        assertRejected(mutated(b -> b.setMediumValue(2), 0), ErrorCause.MALFORMED_FRAME, "is not after record 0");
        Delta badNs = FrameCodec.encodeDelta(IV, RECORDS).toBuilder().setNamespaces(0, ByteString.EMPTY).build();
        assertRejected(badNs, ErrorCause.MALFORMED_FRAME, "namespace 0 must be 1..255 bytes");
    }

    @Test
    @DisplayName("SES-10 the decoded-size bound is checked before records are built")
    void decodedBound() {
        Delta d = FrameCodec.encodeDelta(IV, RECORDS);
        long decoded = FrameCodec.decodedBytes(RECORDS);
        assertThat(FrameCodec.decodeDelta(d, decoded)).isInstanceOf(FrameCodec.Decoded.Ok.class);
        assertThat(FrameCodec.decodeDelta(d, decoded - 1)).isInstanceOfSatisfying(FrameCodec.Decoded.Rejected.class,
                r -> assertThat(r.cause()).isEqualTo(ErrorCause.FRAME_TOO_LARGE));
    }
}
