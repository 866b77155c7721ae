package orbitkv.conformance.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.RejectReason;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.inventory.wire.ErrorCause;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Golden vectors of the snapshot transcript digest (computed independently with Python's hashlib from
 * the byte layout in docs/protocol.md, section "Snapshot transcript digest") and the receiver's refusal mapping onto the
 * v4 wire ErrorCause.
 */
@Tag("unit")
class ReceiverContractTest {
    static StateKey key(String k) {
        return new StateKey(Namespace.utf8("ns-a"), k.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    @DisplayName("SNAP-7 SES-11 transcript digest golden vector: begin, one page, one replay delta")
    void transcriptGoldenVector() {
        Scope scope = Scope.of(List.of(Namespace.utf8("ns-a")));
        assertThat(scope.digest().hex()).isEqualTo("7fe90e8eec77f360f649229157385e02c2099d2062577a75f9f20d5061a19b32");
        TranscriptDigest d = TranscriptDigest.builder()
                .begin(1, new UUID(0x0102030405060708L, 0x090a0b0c0d0e0f10L), scope.digest(), 5)
                .page(2, 1, List.of(ResidenceRecord.put(key("k1"), Medium.DRAM, 3, 100)))
                .replay(3, Interval.of(5, 7), List.of(ResidenceRecord.delete(key("k1"), Medium.DRAM, 6),
                        ResidenceRecord.put(key("k2"), Medium.SSD, 7, 4096)))
                .finish();
        assertThat(d.hex()).isEqualTo("895687516399057cc2844c26f55f0c5a");
    }

    @Test
    @DisplayName("SNAP-7 SES-11 transcript digest golden vector over 100 KB: 300 records of a 255-byte namespace and 64-byte keys, list and batch forms")
    void transcriptLongGoldenVector() {
        Scope scope = Scope.of(List.of(Namespace.utf8("ns-a")));
        byte[] nsBytes = new byte[255];
        for (int i = 0; i < nsBytes.length; i++) {
            nsBytes[i] = (byte) ((i * 7 + 1) % 256);
        }
        Namespace ns = new Namespace(nsBytes);
        List<ResidenceRecord> page = new java.util.ArrayList<>();
        for (int i = 0; i < 300; i++) {
            byte[] k = new byte[64];
            k[0] = (byte) (i >> 8);
            k[1] = (byte) i;
            for (int j = 0; j < 62; j++) {
                k[2 + j] = (byte) ((i + j) % 256);
            }
            page.add(ResidenceRecord.put(new StateKey(ns, k), i % 2 == 0 ? Medium.DRAM : Medium.SSD, 1000 + i, 4096L * i));
        }
        List<ResidenceRecord> replay = List.of(ResidenceRecord.delete(new StateKey(ns, new byte[64]), Medium.SSD, 6));
        UUID view = new UUID(0x0102030405060708L, 0x090a0b0c0d0e0f10L);
        String expected = "7509ccaf85e5657e35356c6eda4cf629";
        assertThat(TranscriptDigest.builder().begin(1, view, scope.digest(), 5).page(2, 1, page)
                .replay(3, Interval.of(5, 7), replay).finish().hex()).isEqualTo(expected);
        assertThat(TranscriptDigest.builder().begin(1, view, scope.digest(), 5).page(2, 1, RecordBatch.of(page))
                .replay(3, Interval.of(5, 7), RecordBatch.of(replay)).finish().hex()).isEqualTo(expected);
    }

    @Test
    @DisplayName("SNAP-7 transcript digest of nothing is MurmurHash3 x64 128 of the domain and version alone")
    void transcriptEmptyVector() {
        assertThat(TranscriptDigest.builder().finish().hex())
                .isEqualTo("015650a1ae46c01815561d559e2bb962");
    }

    @Test
    @DisplayName("SNAP-7 SES-9 a finished transcript builder refuses further frames; transcript digests are exactly 16 bytes")
    void transcriptMisuse() {
        TranscriptDigest.Builder b = TranscriptDigest.builder();
        b.finish();
        assertThatThrownBy(b::finish).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new TranscriptDigest(new byte[15])).hasMessageContaining("exactly 16 bytes");
        assertThatThrownBy(() -> new TranscriptDigest(new byte[32])).hasMessageContaining("exactly 16 bytes");
    }

    @Test
    @DisplayName("SNAP-7 a commit marker with max scanned sequence above S1 cannot be represented")
    void commitMarkerValidation() {
        TranscriptDigest d = TranscriptDigest.builder().finish();
        assertThatThrownBy(() -> new CommitMarker(10, 1, 1, 2, 11, d)).hasMessageContaining("max scanned sequence");
        assertThatThrownBy(() -> new CommitMarker(10, 1, 3, 2, 1, d)).hasMessageContaining("last frame");
    }

    @Test
    @DisplayName("SES-9 every receiver refusal maps onto a v4 wire ErrorCause")
    void rejectReasonsMapOntoWire() {
        for (RejectReason r : RejectReason.values()) {
            assertThat(ErrorCause.valueOf(r.wireCause())).as(r.name()).isNotNull();
        }
    }
}
