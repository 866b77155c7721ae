package orbitkv.conformance.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import orbitkv.index.KeyCandidates;
import orbitkv.index.LookupOutcome;
import orbitkv.index.Replica;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.SourceFrame;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Sessions and their source at the smallest frame bound a session accepts carry the largest legal records,
 * in snapshot pages and in deltas. Before the floor (128 bytes then), such a source sent oversized pages and
 * a SnapshotCommit (130 bytes) could never fit, so the requester refused every bootstrap.
 */
@Tag("gate")
class LargestRecordAtFloorTest {
    static final int FRAME_BYTES = SessionConfig.FRAME_ENCODED_BYTES_MIN;

    static StateKey largest(int i) {
        byte[] ns = new byte[Namespace.MAX_BYTES];
        Arrays.fill(ns, (byte) ('a' + i % 3));
        byte[] key = new byte[StateKey.MAX_KEY_BYTES];
        Arrays.fill(key, (byte) i);
        return new StateKey(new Namespace(ns), key);
    }

    static Map<JournalModel.Residence, JournalModel.Generation> installed(SessionWorld.RequesterNode r, SessionWorld.SourceNode s) {
        List<StateKey> keys = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            keys.add(largest(i));
        }
        Map<JournalModel.Residence, JournalModel.Generation> out = new HashMap<>();
        if (!(r.index.lookup(keys) instanceof LookupOutcome.Candidates c)) {
            throw new AssertionError("lookup refused");
        }
        for (KeyCandidates kc : c.keys()) {
            for (Replica rep : kc.replicas()) {
                if (rep.owner().equals(s.incarnation)) {
                    out.put(new JournalModel.Residence(kc.key(), rep.medium()), new JournalModel.Generation(rep.sequence(), rep.sizeBytes()));
                }
            }
        }
        return out;
    }

    @Test
    @DisplayName("SES-10 DELTA-3 SNAP-5: at SessionConfig.FRAME_ENCODED_BYTES_MIN the largest records bootstrap and stream, one per frame, with no frame refused")
    void largestRecordsAtTheFloor() throws Exception {
        var session = SessionWorld.fastConfig().withFrameBytesMax(FRAME_BYTES, 4 * FRAME_BYTES).withReceiveWindowBytes(4 * FRAME_BYTES);
        var inventory = InventoryConfig.defaults().withFrameEncodedBytesMax(FRAME_BYTES).withFrameDecodedBytesMax(4 * FRAME_BYTES)
                .withPageBytesMax(FRAME_BYTES - InventoryConfig.PAGE_FRAME_OVERHEAD_BYTES);
        try (SessionWorld w = new SessionWorld(session, inventory)) {
            SessionWorld.SourceNode s = w.addSource("src", 1);
            for (int i = 0; i < 12; i++) {
                s.put(largest(i), i % 2 == 0 ? Medium.DRAM : Medium.SSD, Long.MAX_VALUE - i);
            }
            SessionWorld.RequesterNode r = w.addRequester("req", Scope.all());
            w.publishMembership();
            SessionWorld.await("requester installs the 12 largest records", Duration.ofSeconds(20),
                    () -> SessionWorld.cursor(r, s).map(c -> c.watermark() == s.source.headSequence()).orElse(false));
            for (int i = 12; i < 24; i++) {
                s.put(largest(i), Medium.DRAM, i);
                if (i % 3 == 0) {
                    s.delete(largest(i - 12), i % 2 == 0 ? Medium.DRAM : Medium.SSD);
                }
            }
            long head = s.source.headSequence();
            SessionWorld.await("requester streams through " + head, Duration.ofSeconds(20),
                    () -> SessionWorld.cursor(r, s).map(c -> c.watermark() == head).orElse(false));
            assertThat(installed(r, s)).as("installed rows equal the source's resident map at the watermark")
                    .isEqualTo(s.model.stateAt(head, Scope.all()));
            assertThat(s.server.metrics().rejected(ErrorCause.FRAME_TOO_LARGE)).isZero();
            assertThat(r.subscriber.metrics().rejected(ErrorCause.FRAME_TOO_LARGE)).isZero();
            assertThat(r.subscriber.status().sessions().getFirst().installs()).isEqualTo(1);
            for (SourceFrame.BodyCase kind : new SourceFrame.BodyCase[] {SourceFrame.BodyCase.SNAPSHOT_PAGE, SourceFrame.BodyCase.DELTA}) {
                assertThat(s.server.metrics().sent(kind))
                        .as("%s frames, one largest record each", kind).isGreaterThanOrEqualTo(12);
            }
        }
    }
}
