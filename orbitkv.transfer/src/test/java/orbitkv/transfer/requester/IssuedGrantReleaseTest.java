package orbitkv.transfer.requester;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import orbitkv.inventory.Medium;
import orbitkv.transfer.BlockRef;
import orbitkv.transfer.BlockResult;
import orbitkv.transfer.RefusalReason;
import orbitkv.transfer.TransferFixture;
import orbitkv.transfer.requester.IssuedGrant.ReleaseAction;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The requester half of release-after-last-read (issue 37 item 5): when a grant's release is due (no READ in flight,
 * released by its user), it is FOLDED (no Release call) only if the source honoured the flag and every granted
 * block's READ completed over TCP; otherwise the Release call is SENT, exactly once either way (INV-8).
 */
@Tag("unit")
class IssuedGrantReleaseTest {
    private static BlockRef ref(int i) {
        return new BlockRef(TransferFixture.key(i), Medium.DRAM, 1);
    }

    private static IssuedGrant grant(boolean releaseAfterLastRead, BlockResult... blocks) {
        return new IssuedGrant(null, UUID.randomUUID(), new byte[16], null, null, Duration.ofSeconds(10),
                System.nanoTime() + Duration.ofSeconds(10).toNanos(), List.of(blocks), new long[blocks.length], null,
                false, releaseAfterLastRead);
    }

    private static BlockResult granted(int i) {
        return new BlockResult.Granted(ref(i), 100, 0);
    }

    private static void readAll(IssuedGrant g, boolean overTcp, int... blocks) {
        for (int b : blocks) {
            assertThat(g.startRead(b, System.nanoTime())).isNull();
            assertThat(g.readEnded(b, false, overTcp)).isEqualTo(ReleaseAction.NONE);
        }
    }

    @Test
    @DisplayName("INV-8 every granted block READ over TCP and the flag honoured: folded, once")
    void foldedWhenEveryBlockCameOverTcp() {
        IssuedGrant g = grant(true, granted(0), granted(1));
        readAll(g, true, 0, 1);
        assertThat(g.requestRelease()).isEqualTo(ReleaseAction.FOLDED);
        assertThat(g.requestRelease()).as("once").isEqualTo(ReleaseAction.NONE);
    }

    @Test
    @DisplayName("INV-8 refused blocks of a partial grant do not count; the granted ones decide")
    void refusedBlocksDoNotCount() {
        IssuedGrant g = grant(true, granted(0),
                new BlockResult.Refused(ref(1), RefusalReason.NOT_RESIDENT, 0, "gone"));
        readAll(g, true, 0);
        assertThat(g.requestRelease()).isEqualTo(ReleaseAction.FOLDED);
    }

    @Test
    @DisplayName("INV-9 the source did not echo the flag (an older source): the Release call is sent")
    void sentWithoutTheSourcesEcho() {
        IssuedGrant g = grant(false, granted(0));
        readAll(g, true, 0);
        assertThat(g.requestRelease()).isEqualTo(ReleaseAction.SEND);
    }

    @Test
    @DisplayName("INV-9 a block not READ, or READ otherwise than over TCP, or failed: the Release call is sent")
    void sentUnlessEveryBlockCameOverTcp() {
        IssuedGrant unread = grant(true, granted(0), granted(1));
        readAll(unread, true, 0);
        assertThat(unread.requestRelease()).isEqualTo(ReleaseAction.SEND);
        IssuedGrant shm = grant(true, granted(0), granted(1));
        readAll(shm, true, 0);
        readAll(shm, false, 1);
        assertThat(shm.requestRelease()).isEqualTo(ReleaseAction.SEND);
    }

    @Test
    @DisplayName("INV-8 a release asked while the last READ is in flight is decided when that READ physically ends")
    void pendingReleaseDecidedAtTheLastReadsEnd() {
        IssuedGrant g = grant(true, granted(0));
        assertThat(g.startRead(0, System.nanoTime())).isNull();
        assertThat(g.requestRelease()).isEqualTo(ReleaseAction.NONE);
        assertThat(g.readEnded(0, false, true)).isEqualTo(ReleaseAction.FOLDED);
        IssuedGrant failed = grant(true, granted(0));
        assertThat(failed.startRead(0, System.nanoTime())).isNull();
        assertThat(failed.requestRelease()).isEqualTo(ReleaseAction.NONE);
        assertThat(failed.readEnded(0, false, false)).isEqualTo(ReleaseAction.SEND);
    }
}
