package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.Medium;
import orbitkv.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Release folded into the last READ (issue 37 item 5): the requester asks for release-after-last-read in its
 * Authorize; the source ends a grant as RELEASED when its last block's send completes, and the requester then sends
 * no Release call. A grant not READ whole over TCP (a block left unread, a shared-memory READ) is released by the
 * call as before. Either way the pins go exactly once (INV-8, INV-9).
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReleaseAfterLastReadTest {
    private TransferFixture f;
    private Arena arena;

    @BeforeEach
    void start() throws IOException {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()));
        arena = Arena.ofShared();
    }

    @AfterEach
    void stop() throws IOException {
        f.close();
        arena.close();
    }

    private Grant grantTwo() {
        long a = f.payloads.putDram(TransferFixture.key(1), TransferFixture.payload(40_000, 1, 1));
        long b = f.payloads.putSsd(TransferFixture.key(2), TransferFixture.payload(60_000, 1, 2));
        return f.grant(List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, a),
                new BlockRef(TransferFixture.key(2), Medium.SSD, b)));
    }

    private ReadResult read(Grant g, int block, BackendPolicy policy) {
        MemorySegment dst = TransferFixture.destination(arena, block == 0 ? 40_000 : 60_000);
        return TransferFixture.await(f.engine.read(g, block, Destination.of(dst), policy, Duration.ofSeconds(20)));
    }

    private void awaitPinsZero() {
        Await.inJvm("pins back to zero", Duration.ofSeconds(30),
                () -> f.source.status().pinsHeld() == 0 && f.payloads.pinsHeld() == 0);
        assertThat(f.source.status().grantsOutstanding()).isZero();
        assertThat(f.source.status().pinnedBytesHeld()).isZero();
    }

    @Test
    @DisplayName("INV-8 INV-9 every block READ over TCP: the source ends the grant at the last send, no Release call")
    void lastTcpReadEndsGrantWithoutReleaseCall() {
        Grant g = grantTwo();
        assertThat(read(g, 0, BackendPolicy.TCP_ONLY)).isInstanceOf(ReadResult.Completed.class);
        assertThat(f.source.status().pinsHeld()).as("one block still to send: the grant is active").isEqualTo(2);
        assertThat(read(g, 1, BackendPolicy.TCP_ONLY)).isInstanceOf(ReadResult.Completed.class);
        awaitPinsZero(); // before any release by the requester
        assertThat(f.source.status().grantsEnded().get(GrantEnd.RELEASED)).isEqualTo(1);
        assertThat(TransferFixture.await(f.engine.release(g))).isInstanceOf(ReleaseOutcome.Released.class);
        TransferEngineStatus s = f.engine.status();
        assertThat(s.releasesFolded()).isEqualTo(1);
        assertThat(s.releasesConfirmed() + s.releasesNotConfirmed()).as("Release calls").isZero();
        assertThat(s.grantsTracked()).isZero();
        assertThat(f.source.status().grantsEnded().get(GrantEnd.RELEASED)).as("ended once").isEqualTo(1);
        assertThat(TransferFixture.await(f.engine.release(g))).as("released once").isInstanceOf(ReleaseOutcome.Released.class);
        assertThat(f.engine.status().releasesFolded()).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-9 a block left unread: the grant stays active and the Release call ends it")
    void partialReadNeedsReleaseCall() {
        Grant g = grantTwo();
        assertThat(read(g, 1, BackendPolicy.TCP_ONLY)).isInstanceOf(ReadResult.Completed.class);
        assertThat(f.source.status().pinsHeld()).isEqualTo(2);
        assertThat(TransferFixture.await(f.engine.release(g))).isInstanceOf(ReleaseOutcome.Released.class);
        awaitPinsZero();
        TransferEngineStatus s = f.engine.status();
        assertThat(s.releasesFolded()).isZero();
        assertThat(s.releasesConfirmed()).isEqualTo(1);
        assertThat(f.source.status().grantsEnded().get(GrantEnd.RELEASED)).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-8 INV-9 a block READ over shared memory (never sent by the source): the Release call ends the grant")
    void sharedMemoryReadNeedsReleaseCall() {
        Grant g = grantTwo();
        assertThat(g.sharedMemoryEligible()).isTrue();
        assertThat(read(g, 0, BackendPolicy.SHARED_MEMORY_PREFERRED)).isInstanceOfSatisfying(ReadResult.Completed.class,
                c -> assertThat(c.backend()).isEqualTo(Backend.SHARED_MEMORY));
        assertThat(read(g, 1, BackendPolicy.TCP_ONLY)).isInstanceOf(ReadResult.Completed.class);
        assertThat(f.source.status().pinsHeld()).as("block 0 was never sent: the grant is active").isEqualTo(2);
        assertThat(TransferFixture.await(f.engine.release(g))).isInstanceOf(ReleaseOutcome.Released.class);
        awaitPinsZero();
        assertThat(f.engine.status().releasesFolded()).isZero();
        assertThat(f.engine.status().releasesConfirmed()).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-9 a READ of a grant the source ended at its last send is refused by name, and the block is not sent again")
    void readAfterFoldedEndIsRefused() {
        Grant g = grantTwo();
        read(g, 0, BackendPolicy.TCP_ONLY);
        read(g, 1, BackendPolicy.TCP_ONLY);
        awaitPinsZero();
        assertThat(read(g, 1, BackendPolicy.TCP_ONLY)).isInstanceOfSatisfying(ReadResult.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(ReadRefusal.ALREADY_READ));
        assertThat(f.source.status().pinsHeld()).isZero();
    }
}
