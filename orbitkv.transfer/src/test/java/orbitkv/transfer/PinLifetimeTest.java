package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.inventory.Medium;
import orbitkv.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every pin has a terminal owner (INV-9): explicit release, grant expiry on the source's monotonic clock (injected
 * here), exclusion of the requester's incarnation from membership, or fencing of the source. Each path ends the
 * grant and returns the pin count and bytes to zero, at the source and at the payload owner.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PinLifetimeTest {
    private final AtomicLong sourceClock = new AtomicLong(1_000_000_000L);
    private TransferFixture f;
    private Arena arena;

    @BeforeEach
    void start() throws IOException {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()).withSourceClock(sourceClock::get));
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
        Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, a),
                new BlockRef(TransferFixture.key(2), Medium.SSD, b)));
        assertThat(f.source.status().pinsHeld()).isEqualTo(2);
        assertThat(f.source.status().pinnedBytesHeld()).isEqualTo(100_000);
        assertThat(f.payloads.pinsHeld()).isEqualTo(2);
        return g;
    }

    private void awaitZero(GrantEnd cause) {
        Await.inJvm("pins back to zero after " + cause, Duration.ofSeconds(10),
                () -> f.source.status().pinsHeld() == 0 && f.payloads.pinsHeld() == 0);
        TransferSourceStatus s = f.source.status();
        assertThat(s.pinnedBytesHeld()).isZero();
        assertThat(s.grantsOutstanding()).isZero();
        assertThat(s.grantsEnded().get(cause)).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-9 explicit release ends the grant: pin count and bytes return to zero")
    void release() {
        Grant g = grantTwo();
        assertThat(TransferFixture.await(f.engine.release(g))).isInstanceOf(ReleaseOutcome.Released.class);
        awaitZero(GrantEnd.RELEASED);
    }

    @Test
    @DisplayName("INV-9 a requester that never releases: the grant expires on the source's monotonic clock, pins return to zero")
    void expiry() {
        Grant g = grantTwo();
        sourceClock.addAndGet(TimeUnit.MILLISECONDS.toNanos(f.config.grantExpiryMs()) - 1);
        assertThat(f.source.status().pinsHeld()).as("not yet expired").isEqualTo(2);
        sourceClock.addAndGet(1);
        awaitZero(GrantEnd.EXPIRED);
        // The requester's local deadline (real clock) has not passed: it asks, and the source refuses by name.
        MemorySegment dst = TransferFixture.destination(arena, 40_000);
        assertThat(TransferFixture.await(f.engine.read(g, 0, Destination.of(dst), BackendPolicy.TCP_ONLY,
                Duration.ofSeconds(5)))).isInstanceOfSatisfying(ReadResult.Refused.class,
                        r -> assertThat(r.reason()).isEqualTo(ReadRefusal.SOURCE_GRANT_ENDED));
        assertThat(TransferFixture.await(f.engine.release(g))).isInstanceOf(ReleaseOutcome.AlreadyEnded.class);
        assertThat(f.source.status().dataRefusals().get(DataRefusal.GRANT_UNKNOWN)).isEqualTo(1);
    }

    @Test
    @DisplayName("INV-9 IDX-13 exclusion of the requester's incarnation from the source's membership view ends its grants")
    void exclusion() {
        grantTwo();
        f.source.onMembership(f.membership.set(false)); // suspended: granted work keeps its ownership (MEM-9)
        assertThat(f.source.status().pinsHeld()).isEqualTo(2);
        f.source.onMembership(f.membership.set(true, f.sourceIncarnation, f.requesterIncarnation));
        assertThat(f.source.status().pinsHeld()).as("still admitted").isEqualTo(2);
        f.source.onMembership(f.membership.set(true, f.sourceIncarnation));
        awaitZero(GrantEnd.EXCLUDED);
        AuthorizeOutcome o = f.authorize(Intent.FOREGROUND, List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, 1)));
        assertThat(o).isInstanceOfSatisfying(AuthorizeOutcome.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(RefusalReason.REQUESTER_NOT_ADMITTED));
    }

    @Test
    @DisplayName("INV-7 INV-9 fencing the source ends every grant and refuses every later Authorize and READ")
    void fence() {
        Grant g = grantTwo();
        f.source.fence();
        awaitZero(GrantEnd.FENCED);
        AuthorizeOutcome o = f.authorize(Intent.FOREGROUND, List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, 1)));
        assertThat(o).isInstanceOfSatisfying(AuthorizeOutcome.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(RefusalReason.SOURCE_FENCED));
        MemorySegment dst = TransferFixture.destination(arena, 40_000);
        assertThat(TransferFixture.await(f.engine.read(g, 0, Destination.of(dst), BackendPolicy.TCP_ONLY,
                Duration.ofSeconds(5)))).isInstanceOfSatisfying(ReadResult.Refused.class,
                        r -> assertThat(r.reason()).isEqualTo(ReadRefusal.SOURCE_CLOSED));
    }

    @Test
    @DisplayName("INV-9 closing the engine without releasing asks the source to release what it tracks")
    void engineCloseReleases() {
        grantTwo();
        f.engine.close();
        Await.inJvm("pins back to zero", Duration.ofSeconds(10), () -> f.source.status().pinsHeld() == 0);
        assertThat(f.source.status().grantsEnded().get(GrantEnd.RELEASED)).isEqualTo(1);
    }
}
