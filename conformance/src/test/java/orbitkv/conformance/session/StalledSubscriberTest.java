package orbitkv.conformance.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SourceSessionStatus;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** A subscriber stalled beyond its window costs the source bounded memory and never delays other sessions. */
@Tag("gate")
class StalledSubscriberTest {
    static final int WINDOW_BYTES = 4 << 10;

    @Test
    @DisplayName("SES-3 SES-13 BND-4 BND-5: a stalled subscriber is held at its credit window; another requester keeps converging")
    void stalledSubscriberIsBounded() throws Exception {
        var session = SessionWorld.fastConfig().withFrameBytesMax(2 << 10, 8 << 10).withReceiveWindowBytes(WINDOW_BYTES);
        var inventory = InventoryConfig.defaults().withFrameEncodedBytesMax(2 << 10).withFrameDecodedBytesMax(8 << 10)
                .withJournalRecordsMax(256).withPageRecordsMax(8);
        try (SessionWorld w = new SessionWorld(session, inventory)) {
            SessionWorld.SourceNode s = w.addSource("src", 1);
            SessionWorld.RequesterNode stalled = w.addRequester("req-stalled", Scope.all(), true);
            SessionWorld.RequesterNode healthy = w.addRequester("req-healthy", Scope.all(), false);
            w.publishMembership();
            w.awaitConvergedAndCompare(Duration.ofSeconds(20), () -> "initial");
            s.proxy.stall(true);
            for (int round = 0; round < 20; round++) {
                for (int i = 0; i < 100; i++) {
                    s.put(SessionWorld.key(i % 3, (round * 7 + i) % 64), i % 2 == 0 ? Medium.DRAM : Medium.SSD, round * 1000 + i);
                }
                long head = s.source.headSequence();
                SessionWorld.await("healthy requester installs through " + head + " while the other is stalled",
                        Duration.ofSeconds(10), () -> SessionWorld.cursor(healthy, s).map(c -> c.watermark() == head).orElse(false));
                w.compare(healthy, s, () -> "healthy during stall");
                for (SourceSessionStatus st : s.server.status()) {
                    assertThat(st.outstandingBytes()).isLessThanOrEqualTo(WINDOW_BYTES);
                    assertThat(st.peakOutstandingBytes()).isLessThanOrEqualTo(WINDOW_BYTES);
                }
            }
            assertThat(SessionWorld.cursor(stalled, s).orElseThrow().watermark()).as("the stalled requester fell behind")
                    .isLessThan(s.source.headSequence());
            s.proxy.stall(false);
            w.awaitConvergedAndCompare(Duration.ofSeconds(20), () -> "after the stall (journal trimmed: re-bootstrap)");
        }
    }
}
