package orbitkv.inventory.session;

import static orbitkv.inventory.session.ClockedSessions.await;
import static orbitkv.inventory.session.ClockedSessions.awaitArmed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.SecondsHistogram;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.SourceSessionStatus;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.SubscriptionStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The session timers follow injected time (issue 25 item 1): each end runs on a {@link orbitkv.testing.ManualClock},
 * and each timer's effect happens exactly when virtual time passes its due time, not a nanosecond earlier, however
 * much real time goes by. Before the ProtocolClock these timers read {@code System.nanoTime()} and the ACK timer
 * had its own thread, so none of these assertions could be made at an exact instant.
 */
@Tag("unit")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SessionClockTest {
    private static final long MS = 1_000_000L;
    /** Long enough that liveness never fires in the tests that do not advance past it. */
    private static final SessionConfig QUIET = SessionConfig.defaults().withLivenessIntervalMs(60_000).withBackoffMs(2, 20, 2, 20);
    private ClockedSessions pair;

    @AfterEach
    void close() throws InterruptedException {
        if (pair != null) {
            pair.close();
        }
    }

    @Test
    @DisplayName("issue 25 PUB-4 the coalescing window reads when virtual time passes the window, exactly: its intentional wait is the window")
    void coalescingWindowFiresWhenVirtualTimePassesIt() throws Exception {
        pair = new ClockedSessions(InventoryConfig.defaults().withWindow(50, 200), QUIET, true);
        awaitStreaming();
        pair.source.put(key(1), Medium.DRAM, 10);
        awaitArmed("the pump's coalescing window", pair.sourceTime, 50 * MS);
        assertThat(pair.receiver.deltas.get()).as("nothing read while the window is open").isZero();

        pair.sourceTime.advance(50 * MS - 1);
        assertThat(pair.sourceTime.pendingDelaysNanos()).as("the window's wake-up still armed, 1 ns short").contains(1L);
        assertThat(pair.receiver.deltas.get()).as("1 ns before the window closes").isZero();

        pair.sourceTime.advance(1);
        await("the delta read and applied once the window closed", () -> pair.receiver.deltas.get() == 1);
        SecondsHistogram waits = pair.source.intentionalWaitSeconds();
        assertThat(Arrays.stream(waits.counts()).sum()).as("one window opened and read").isEqualTo(1);
        assertThat(waits.sumSeconds()).as("the wait is the window in virtual time, not a real-time approximation")
                .isCloseTo(0.050, within(1e-12));
    }

    @Test
    @DisplayName("issue 25 DELTA-12 SES-14 the requester's ACK leaves when virtual time passes the ACK interval, returning the credit then")
    void ackCadenceFollowsVirtualTime() throws Exception {
        pair = new ClockedSessions(InventoryConfig.defaults().withWindow(0, 0), QUIET, true);
        awaitStreaming();
        pair.source.put(key(1), Medium.DRAM, 10);
        await("the delta applied", () -> pair.receiver.deltas.get() == 1);
        long ackNanos = TimeUnit.MILLISECONDS.toNanos(SessionConfig.DEFAULT_ACK_INTERVAL_MS);
        awaitArmed("the ACK timer", pair.requesterTime, ackNanos);
        await("the delta's bytes outstanding at the source", () -> source().outstandingBytes() > 0);
        assertThat(source().creditReturnedBytes()).isZero();

        pair.requesterTime.advance(ackNanos - 1);
        assertThat(pair.requesterTime.pendingDelaysNanos()).as("the ACK timer still armed, 1 ns short").contains(1L);
        assertThat(source().creditReturnedBytes()).as("no ACK before the interval").isZero();

        pair.requesterTime.advance(1);
        await("the ACK returned all credit", () -> source().outstandingBytes() == 0 && source().creditReturnedBytes() > 0);
    }

    @Test
    @DisplayName("issue 25 DELTA-13 IDX-12 the receive deadline replaces a silent stream at exactly three liveness intervals of virtual time, and the reconnect waits its virtual backoff")
    void receiveDeadlineFollowsVirtualTime() throws Exception {
        SessionConfig config = SessionConfig.defaults().withLivenessIntervalMs(1000).withBackoffMs(2, 20, 2, 20);
        pair = new ClockedSessions(InventoryConfig.defaults(), config, false); // the source's clock never moves: it is silent
        awaitStreaming();
        long deadline = RequesterSession.SILENT_LIVENESS_INTERVALS_MAX * 1000 * MS;
        awaitArmed("the receive deadline", pair.requesterTime, deadline);

        pair.requesterTime.advance(deadline - 1);
        assertThat(pair.requesterTime.pendingDelaysNanos()).as("the deadline still armed, 1 ns short").contains(1L);
        assertThat(pair.peer().connects()).as("not replaced before the deadline").isEqualTo(1);
        assertThat(pair.peer().lastErrorCause()).isEmpty();

        pair.requesterTime.advance(1);
        await("the silent stream ended by the receive deadline",
                () -> RequesterSession.RECEIVE_SILENCE_CAUSE.equals(pair.peer().lastErrorCause()));
        // advancing before the loop armed its backoff would start the backoff after the advance: wait for it first
        await("the reconnect backoff armed (at most its 20 ms cap of virtual time)", () -> pair.requesterTime.pendingDelaysNanos()
                .stream().anyMatch(d -> d > 0 && d <= 20 * MS));
        assertThat(pair.peer().connects()).as("the reconnect waits for its backoff in virtual time").isEqualTo(1);
        pair.requesterTime.advance(20 * MS); // the reconnect backoff's cap
        await("a second stream resumed the installed view", () -> pair.peer().connects() == 2
                && pair.peer().state() == SubscriptionStatus.State.STREAMING);
        assertThat(pair.receiver.installs.get()).as("resumed, not bootstrapped again (SNAP-8)").isEqualTo(1);
    }

    @Test
    @DisplayName("issue 25 DELTA-13 the source sends liveness when its virtual clock passes the liveness interval, not before")
    void sourceLivenessFollowsVirtualTime() throws Exception {
        SessionConfig config = SessionConfig.defaults().withLivenessIntervalMs(1000).withBackoffMs(2, 20, 2, 20);
        pair = new ClockedSessions(InventoryConfig.defaults(), config, false);
        awaitStreaming();
        awaitArmed("the pump's liveness", pair.sourceTime, 1000 * MS);
        assertThat(pair.receiver.liveness.get()).isZero();

        pair.sourceTime.advance(1000 * MS - 1);
        assertThat(pair.sourceTime.pendingDelaysNanos()).as("liveness still armed, 1 ns short").contains(1L);
        assertThat(pair.receiver.liveness.get()).as("no liveness before the interval").isZero();

        pair.sourceTime.advance(1);
        await("one liveness frame received", () -> pair.receiver.liveness.get() == 1);
        assertThat(pair.peer().connects()).isEqualTo(1);
    }

    private void awaitStreaming() throws InterruptedException {
        await("the view installed and both ends streaming", () -> pair.receiver.installs.get() == 1
                && pair.peer().state() == SubscriptionStatus.State.STREAMING
                && pair.sourceSession().map(s -> s.phase() == SourceSessionStatus.Phase.STREAMING).orElse(false));
    }

    private SourceSessionStatus source() {
        return pair.sourceSession().orElseThrow();
    }

    private static StateKey key(int i) {
        return new StateKey(Namespace.utf8("clock"), new byte[] {(byte) i});
    }
}
