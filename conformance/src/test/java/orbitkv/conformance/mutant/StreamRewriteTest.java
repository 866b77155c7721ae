package orbitkv.conformance.mutant;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.UUID;
import orbitkv.conformance.peer.WireFrames;
import orbitkv.inventory.wire.Ack;
import orbitkv.inventory.wire.Liveness;
import orbitkv.inventory.wire.OpenAccepted;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SnapshotBegin;
import orbitkv.inventory.wire.SnapshotCommit;
import orbitkv.inventory.wire.SnapshotPage;
import orbitkv.inventory.wire.SourceFrame;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The rewrites {@link MutantKitTest} puts between the kit and a Manager, on crafted frames (no processes). */
@Tag("unit")
class StreamRewriteTest {
    private static final UUID SID = new UUID(1, 2);

    private static SourceFrame.Builder frame(long n) {
        return SourceFrame.newBuilder().setSessionId(WireFrames.uuid(SID)).setFrameNumber(n);
    }

    private static List<Long> numbers(StreamRewrite rw, SourceFrame... frames) throws Exception {
        List<Long> out = new java.util.ArrayList<>();
        for (SourceFrame f : frames) {
            for (byte[] b : rw.toRequester(f.toByteArray())) {
                out.add(SourceFrame.parseFrom(b).getFrameNumber());
            }
        }
        return out;
    }

    private static final SourceFrame[] BOOTSTRAP = {
        frame(1).setAccepted(OpenAccepted.getDefaultInstance()).build(), frame(2).setSnapshotBegin(SnapshotBegin.getDefaultInstance()).build(),
        frame(3).setSnapshotPage(SnapshotPage.getDefaultInstance()).build(), frame(4).setSnapshotPage(SnapshotPage.getDefaultInstance()).build(),
        frame(5).setSnapshotCommit(SnapshotCommit.getDefaultInstance()).build(), frame(6).setLiveness(Liveness.getDefaultInstance()).build()};

    @Test
    @DisplayName("SES-12: the identity rewrite forwards every message byte for byte, frames and garbage alike")
    void identityIsByteTransparent() {
        StreamRewrite id = StreamRewrite.identity();
        byte[] garbage = {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x01, 0x02};
        byte[] ack = RequesterFrame.newBuilder().setAck(Ack.newBuilder().setConsumedThroughFrame(3)).build().toByteArray();
        assertThat(id.toSource(garbage)).containsExactly(garbage);
        assertThat(id.toSource(ack)).containsExactly(ack);
        for (SourceFrame f : BOOTSTRAP) {
            assertThat(id.toRequester(f.toByteArray())).hasSize(1).first().isEqualTo(f.toByteArray());
        }
    }

    @Test
    @DisplayName("SES-12 SNAP-7: the bootstrap mutants reorder, renumber and drop exactly as described")
    void bootstrapMutants() throws Exception {
        assertThat(numbers(Mutant.SOURCE_COMMIT_BEFORE_S1.rewrite().get(), BOOTSTRAP)).containsExactly(1L, 2L, 3L, 5L, 4L, 6L);
        assertThat(numbers(Mutant.SOURCE_SKIPPED_SEQUENCE.rewrite().get(), BOOTSTRAP)).containsExactly(1L, 3L, 4L, 5L, 6L, 7L);
        assertThat(numbers(Mutant.SOURCE_SNAPSHOT_NEVER_ENDS.rewrite().get(), BOOTSTRAP)).containsExactly(1L, 2L, 3L, 4L, 6L);
    }

    @Test
    @DisplayName("SES-13: ACK mutants drop or move only ACKs")
    void ackMutants() throws Exception {
        RequesterFrame open = RequesterFrame.newBuilder().setOpen(orbitkv.inventory.wire.Open.getDefaultInstance()).build();
        RequesterFrame ack = RequesterFrame.newBuilder().setAck(Ack.newBuilder().setConsumedThroughFrame(3).setAppliedCursor(3)).build();
        StreamRewrite ignores = Mutant.SOURCE_IGNORES_CREDITS.rewrite().get();
        assertThat(ignores.toSource(ack.toByteArray())).as("an ACK before the Open passes").hasSize(1);
        assertThat(ignores.toSource(open.toByteArray())).hasSize(1);
        assertThat(ignores.toSource(ack.toByteArray())).as("ACKs after the Open are dropped").isEmpty();
        byte[] beyond = Mutant.REQUESTER_ACK_BEYOND_RECEIVED.rewrite().get().toSource(ack.toByteArray()).getFirst();
        assertThat(RequesterFrame.parseFrom(beyond).getAck().getConsumedThroughFrame()).isEqualTo(3 + Mutant.ACK_BEYOND);
        byte[] cursor = Mutant.REQUESTER_WRONG_APPLIED_CURSOR.rewrite().get().toSource(ack.toByteArray()).getFirst();
        assertThat(RequesterFrame.parseFrom(cursor).getAck().getAppliedCursor()).isEqualTo(4);
    }
}
