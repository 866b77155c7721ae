package orbitkv.transfer.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.inventory.Medium;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.transfer.BlockRef;
import orbitkv.transfer.GrantEnd;
import orbitkv.transfer.Intent;
import orbitkv.transfer.TestPayloadSource;
import orbitkv.transfer.TransferFixture;
import orbitkv.transfer.frame.DataStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The source half of release-after-last-read (issue 37 item 5) in the grant table, without sockets: the grant ends
 * RELEASED exactly once, when its last granted block's send completes; an aborted send (EGRESS_LIMIT, a read error)
 * does not count; without the flag nothing changes; an explicit Release or the expiry before that still ends it once.
 */
@Tag("unit")
class GrantReleaseAfterLastReadTest {
    private static final Incarnation A = Incarnation.random(new NodeId("req-a"), new NodeEpoch(1));
    private static final GrantTable.SendCut NO_CUT = () -> {};
    private final AtomicLong clock = new AtomicLong(5_000_000_000L);
    private final SourceCounters counters = new SourceCounters();
    @TempDir
    Path dir;
    private TestPayloadSource payloads;
    private GrantTable table;

    @BeforeEach
    void start() throws IOException {
        payloads = new TestPayloadSource(dir, 64L << 20, Files.createDirectories(dir.resolve("ssd")), 1_000_000);
        table = new GrantTable(TransferFixture.testConfig(), clock::get, counters);
    }

    @AfterEach
    void stop() throws IOException {
        payloads.close();
    }

    private BlockRef put(int i) {
        return new BlockRef(TransferFixture.key(i), Medium.DRAM, payloads.putDram(TransferFixture.key(i), new byte[100]));
    }

    private SourceGrant issue(boolean releaseAfterLastRead) {
        return table.issue(A, Intent.FOREGROUND, List.of(put(1), put(2)), payloads, releaseAfterLastRead).grant();
    }

    private GrantTable.SendStart.Start begin(SourceGrant g, int block) {
        return (GrantTable.SendStart.Start) table.beginSend(g.id, block, true, NO_CUT);
    }

    private void assertEndedOnce(SourceGrant g) {
        assertThat(g.state()).isEqualTo(SourceGrant.State.FINISHED);
        assertThat(table.pinsHeld()).isZero();
        assertThat(payloads.pinsHeld()).isZero();
        assertThat(table.outstanding()).isZero();
        assertThat(counters.grantsEnded.snapshot().get(GrantEnd.RELEASED)).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-8 INV-9 the last send's completion ends the grant RELEASED once; not before it")
    void endsAtLastSendCompletion() {
        SourceGrant g = issue(true);
        GrantTable.SendStart.Start s0 = begin(g, 0);
        GrantTable.SendStart.Start s1 = begin(g, 1);
        table.endSend(s1);
        assertThat(g.state()).as("block 0 still on the wire").isEqualTo(SourceGrant.State.ACTIVE);
        assertThat(table.pinsHeld()).isEqualTo(2);
        table.endSend(s0);
        assertEndedOnce(g);
        assertThat(table.release(A, g.id)).as("a late Release").isEqualTo(GrantTable.ReleaseResult.UNKNOWN);
        assertThat(table.sweepExpired()).isZero();
        assertEndedOnce(g);
    }

    @Test
    @DisplayName("INV-9 an aborted send may be READ again: it does not count as sent")
    void abortedSendDoesNotEnd() {
        SourceGrant g = issue(true);
        table.endSend(begin(g, 0));
        table.abortSend(begin(g, 1));
        assertThat(g.state()).isEqualTo(SourceGrant.State.ACTIVE);
        assertThat(table.pinsHeld()).isEqualTo(2);
        table.endSend(begin(g, 1));
        assertEndedOnce(g);
    }

    @Test
    @DisplayName("INV-9 without the flag (an older requester) every send completes and the grant waits for its Release")
    void withoutFlagWaitsForRelease() {
        SourceGrant g = issue(false);
        table.endSend(begin(g, 0));
        table.endSend(begin(g, 1));
        assertThat(g.state()).isEqualTo(SourceGrant.State.ACTIVE);
        assertThat(table.pinsHeld()).isEqualTo(2);
        assertThat(table.release(A, g.id)).isEqualTo(GrantTable.ReleaseResult.RELEASED);
        assertEndedOnce(g);
    }

    @Test
    @DisplayName("INV-8 INV-9 an explicit Release while the last send is on the wire: DRAINING, ended once at the send's end")
    void releaseBeforeLastSendCompletes() {
        SourceGrant g = issue(true);
        table.endSend(begin(g, 0));
        GrantTable.SendStart.Start s1 = begin(g, 1);
        assertThat(table.release(A, g.id)).isEqualTo(GrantTable.ReleaseResult.RELEASED);
        assertThat(g.state()).isEqualTo(SourceGrant.State.DRAINING);
        assertThat(table.beginSend(g.id, 1, true, NO_CUT)).isInstanceOfSatisfying(GrantTable.SendStart.Refuse.class,
                r -> assertThat(r.status()).isEqualTo(DataStatus.GRANT_UNKNOWN));
        table.endSend(s1);
        assertEndedOnce(g);
    }

    @Test
    @DisplayName("INV-9 a grant whose blocks were not all sent still expires on the source's clock")
    void unsentBlockStillExpires() {
        SourceGrant g = issue(true);
        table.endSend(begin(g, 0));
        clock.addAndGet(TransferFixture.testConfig().grantExpiryMs() * 1_000_000L);
        assertThat(table.sweepExpired()).isEqualTo(1);
        assertThat(g.state()).isEqualTo(SourceGrant.State.FINISHED);
        assertThat(table.pinsHeld()).isZero();
        assertThat(counters.grantsEnded.snapshot().get(GrantEnd.EXPIRED)).isEqualTo(1);
    }
}
