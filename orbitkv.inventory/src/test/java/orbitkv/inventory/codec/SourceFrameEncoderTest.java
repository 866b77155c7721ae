package orbitkv.inventory.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.Drainable;
import io.grpc.KnownLength;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.wire.SnapshotCommit;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.wire.Uuid;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Tag("unit")
class SourceFrameEncoderTest {
    private static final UUID VIEW = new UUID(0x0102030405060708L, 0x1112131415161718L);
    private static final Namespace NS = Namespace.utf8("orbitkv-test-namespace");
    private static final List<ResidenceRecord> RECORDS = List.of(
            ResidenceRecord.put(new StateKey(NS, new byte[] {1, 2, 3}), Medium.DRAM, 7, 4096),
            ResidenceRecord.put(new StateKey(NS, new byte[] {1, 2, 3}), Medium.SSD, 9, 0),
            ResidenceRecord.delete(new StateKey(Namespace.utf8("b"), new byte[] {(byte) 0xff}), Medium.SSD, Long.MAX_VALUE));

    @ParameterizedTest(name = "session ({0}, {1}) -> frame number at offset {2}")
    @CsvSource({"-1, -1, 21", "0, 5, 12", "5, 0, 12", "0, 0, 3"})
    @DisplayName("SES-9 SES-12 numbering patches exactly the 8 fixed64 bytes at 3 + the session id's Uuid body size")
    void frameNumberPatch(long msb, long lsb, int offset) {
        UUID session = new UUID(msb, lsb);
        for (long n : new long[] {1, 2, 255, 1L << 32, Long.MAX_VALUE}) {
            UnnumberedFrame u = SourceFrameEncoder.page(session, VIEW, 1, RECORDS);
            assertThat(u.frameNumberOffset()).isEqualTo(offset)
                    .isEqualTo(UnnumberedFrame.frameNumberOffset(SourceFrameEncoder.uuidBodyBytes(msb, lsb)));
            byte[] numbered = u.number(n).toByteArray();
            byte[] expected = WireReference.page(session, n, VIEW, 1, RECORDS).toByteArray();
            assertThat(numbered).isEqualTo(expected);
            byte[] other = WireReference.page(session, n == 1 ? 2 : 1, VIEW, 1, RECORDS).toByteArray();
            assertThat(Arrays.mismatch(numbered, other)).isBetween(offset, offset + 7); // only the number differs
            assertThat(Arrays.equals(numbered, offset + 8, numbered.length, other, offset + 8, other.length)).isTrue();
        }
    }

    @Test
    @DisplayName("SES-12 frame numbers start at 1: 0 (omitted by generated code) and values above 2^63-1 are refused; a frame is numbered once")
    void numberOnce() {
        UnnumberedFrame u = SourceFrameEncoder.delta(UUID.randomUUID(), new Interval(3, 5), RECORDS.subList(0, 1));
        assertThatThrownBy(() -> u.number(0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("frame_number must be 1..2^63-1, got 0");
        assertThatThrownBy(() -> u.number(-1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("got -1");
        u.number(1);
        assertThatThrownBy(() -> u.number(2)).isInstanceOf(IllegalStateException.class).hasMessageContaining("already numbered");
    }

    @Test
    @DisplayName("SES-12 a generated control frame numbered by patch equals the frame built with that number")
    void generatedFramePatch() {
        SourceFrame.Builder b = SourceFrame.newBuilder().setSessionId(Uuid.newBuilder().setLsb(42))
                .setSnapshotCommit(SnapshotCommit.newBuilder().setViewId(WireReference.uuid(VIEW)).setS1(10).setPageCount(2)
                        .setFirstFrame(2).setLastFrame(4).setTranscriptDigest(ByteString.copyFrom(new byte[16])));
        UnnumberedFrame u = UnnumberedFrame.of(b.setFrameNumber(Long.MAX_VALUE).build());
        assertThat(u.frameNumberOffset()).isEqualTo(12);
        EncodedFrame f = u.number(5);
        assertThat(f.toByteArray()).isEqualTo(b.setFrameNumber(5).build().toByteArray());
        assertThat(f.body()).isEqualTo(SourceFrame.BodyCase.SNAPSHOT_COMMIT);
        assertThatThrownBy(() -> UnnumberedFrame.of(b.setFrameNumber(0).build())).hasMessageContaining("non-zero placeholder frame_number");
        assertThatThrownBy(() -> UnnumberedFrame.of(b.clearSessionId().setFrameNumber(1).build())).hasMessageContaining("session_id");
    }

    @Test
    @DisplayName("PUB-9 a namespace table of 300 entries (indexes >= 128 take two varint bytes) and a 1,024-record page are byte-identical")
    void wideTableAndFullPage() {
        List<ResidenceRecord> wide = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            wide.add(ResidenceRecord.put(new StateKey(Namespace.utf8("ns-" + i), new byte[] {(byte) i}), Medium.DRAM, i + 1, i));
        }
        wide.add(ResidenceRecord.delete(new StateKey(Namespace.utf8("ns-0"), new byte[] {9}), Medium.SSD, 1000));
        UUID session = UUID.randomUUID();
        assertThat(SourceFrameEncoder.delta(session, new Interval(0, 1000), wide).number(3).toByteArray())
                .isEqualTo(WireReference.delta(session, 3, new Interval(0, 1000), wide).toByteArray());
        List<ResidenceRecord> page = new ArrayList<>();
        for (int i = 0; i < 1024; i++) {
            byte[] k = new byte[32];
            k[0] = (byte) (i >> 8);
            k[1] = (byte) i;
            page.add(ResidenceRecord.put(new StateKey(NS, k), Medium.DRAM, i + 1, 4096));
        }
        assertThat(SourceFrameEncoder.page(session, VIEW, 7, page).number(9).toByteArray())
                .isEqualTo(WireReference.page(session, 9, VIEW, 7, page).toByteArray());
    }

    @Test
    @DisplayName("SES-13 the marshaller's stream has a known length and drains the exact bytes in one write; parse reads a SourceFrame back")
    void marshallerStream() throws IOException {
        EncodedFrame f = SourceFrameEncoder.page(UUID.randomUUID(), VIEW, 1, RECORDS).number(1);
        InputStream s = EncodedFrame.marshaller().stream(f);
        assertThat(s).isInstanceOf(KnownLength.class).isInstanceOf(Drainable.class);
        assertThat(s.available()).isEqualTo(f.encodedBytes());
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        assertThat(((Drainable) s).drainTo(sink)).isEqualTo(f.encodedBytes());
        assertThat(sink.toByteArray()).isEqualTo(f.toByteArray());
        assertThat(s.available()).isZero();
        EncodedFrame back = EncodedFrame.marshaller().parse(EncodedFrame.marshaller().stream(f));
        assertThat(back.toByteArray()).isEqualTo(f.toByteArray());
        assertThat(back.body()).isEqualTo(SourceFrame.BodyCase.SNAPSHOT_PAGE);
    }
}
