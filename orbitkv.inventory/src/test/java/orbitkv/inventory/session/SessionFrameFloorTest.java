package orbitkv.inventory.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import orbitkv.inventory.Interval;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.codec.FrameCodec;
import orbitkv.inventory.codec.SourceFrameEncoder;
import orbitkv.inventory.codec.UnnumberedFrame;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.Liveness;
import orbitkv.inventory.wire.OpenAccepted;
import orbitkv.inventory.wire.OpenMode;
import orbitkv.inventory.wire.SnapshotBegin;
import orbitkv.inventory.wire.SnapshotCommit;
import orbitkv.inventory.wire.SourceFrame;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Every frame a source can send, at its widest, fits the smallest frame bound a session accepts (SES-10). */
@Tag("unit")
class SessionFrameFloorTest {
    static final UUID ID = new UUID(-1, -1);
    static final long MAX = Long.MAX_VALUE;

    /** The largest legal record: 255-byte namespace, 64-byte key, widest sequence and size. */
    static ResidenceRecord largestRecord() {
        byte[] ns = new byte[Namespace.MAX_BYTES];
        Arrays.fill(ns, (byte) 0xff);
        byte[] key = new byte[StateKey.MAX_KEY_BYTES];
        Arrays.fill(key, (byte) 0xff);
        return ResidenceRecord.put(new StateKey(new Namespace(ns), key), Medium.SSD, MAX, MAX);
    }

    static int control(SourceFrame.Builder b) {
        return UnnumberedFrame.of(b.setSessionId(Wire.uuid(ID)).setFrameNumber(MAX).build()).encodedBytes();
    }

    @Test
    @DisplayName("SES-10 DELTA-3 SNAP-5: the widest page, delta, begin, commit, liveness, accepted and error frames fit SessionConfig.FRAME_ENCODED_BYTES_MIN")
    void widestFramesFitTheFloor() {
        ResidenceRecord r = largestRecord();
        ByteString digest = ByteString.copyFrom(new byte[16]);
        Map<String, Integer> sizes = new LinkedHashMap<>();
        sizes.put("page of one largest record", SourceFrameEncoder.page(ID, ID, MAX, List.of(r)).encodedBytes());
        sizes.put("delta of one largest record", SourceFrameEncoder.delta(ID, new Interval(MAX - 1, MAX), List.of(r)).encodedBytes());
        sizes.put("begin", control(SourceFrame.newBuilder().setSnapshotBegin(SnapshotBegin.newBuilder().setViewId(Wire.uuid(ID))
                .setS0(MAX).setScopeDigest(digest))));
        sizes.put("commit", control(SourceFrame.newBuilder().setSnapshotCommit(SnapshotCommit.newBuilder().setViewId(Wire.uuid(ID))
                .setS1(MAX).setPageCount(MAX).setFirstFrame(MAX).setLastFrame(MAX).setMaxScannedSequence(MAX)
                .setTranscriptDigest(digest))));
        sizes.put("liveness", control(SourceFrame.newBuilder().setLiveness(Liveness.newBuilder().setSourceHead(MAX)
                .setOldestRetained(MAX).setJournalBytes(MAX))));
        sizes.put("accepted", control(SourceFrame.newBuilder().setAccepted(OpenAccepted.newBuilder().setMode(OpenMode.OPEN_MODE_BOOTSTRAP)
                .setSourceHead(MAX).setOldestRetained(MAX).setWindowBytes(MAX))));
        String longDetail = "\u00e9".repeat(4096);
        sizes.put("error, detail cut to the floor", control(SourceFrame.newBuilder()
                .setError(Wire.error(ErrorCause.FRAME_TOO_LARGE, longDetail, SessionConfig.FRAME_ENCODED_BYTES_MIN))));
        System.out.println("widest frames (encoded bytes) vs floor " + SessionConfig.FRAME_ENCODED_BYTES_MIN + ": " + sizes);
        assertThat(sizes).allSatisfy((what, bytes) -> assertThat(bytes).as(what).isLessThanOrEqualTo(SessionConfig.FRAME_ENCODED_BYTES_MIN));
        assertThat(FrameCodec.decodedBytes(List.of(r))).as("decoded bytes of the largest record")
                .isLessThanOrEqualTo(SessionConfig.FRAME_ENCODED_BYTES_MIN);
        // A full 1 KiB detail needs a bigger frame: the cut is what keeps the error inside the floor.
        assertThat(control(SourceFrame.newBuilder().setError(Wire.error(ErrorCause.FRAME_TOO_LARGE, longDetail))))
                .isGreaterThan(SessionConfig.FRAME_ENCODED_BYTES_MIN);
    }

    @Test
    @DisplayName("BND-6 DELTA-3 a session refuses a frame bound below the floor, its own or the source's, naming both sides")
    void boundsBelowTheFloorAreRefused() {
        int below = SessionConfig.FRAME_ENCODED_BYTES_MIN - 1;
        assertThatThrownBy(() -> SessionConfig.defaults().withFrameBytesMax(below, 4096))
                .hasMessage("frameEncodedBytesMax (" + below + ") must be >= SessionConfig.FRAME_ENCODED_BYTES_MIN (512)");
        InventoryConfig source = InventoryConfig.defaults().withFrameEncodedBytesMax(below).withFrameDecodedBytesMax(4096)
                .withPageBytesMax(below - InventoryConfig.PAGE_FRAME_OVERHEAD_BYTES);
        assertThatThrownBy(() -> SessionConfig.defaults().requireCompatible(source))
                .hasMessageContaining("InventoryConfig.frameEncodedBytesMax (" + below + ")")
                .hasMessageContaining("SessionConfig.FRAME_ENCODED_BYTES_MIN (512)");
        SessionConfig.defaults().withFrameBytesMax(512, 4096).withReceiveWindowBytes(4096)
                .requireCompatible(source.withFrameEncodedBytesMax(512));
    }
}
