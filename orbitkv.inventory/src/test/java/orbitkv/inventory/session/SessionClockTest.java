package orbitkv.inventory.session;

import static orbitkv.inventory.session.ClockedSessions.await;
import static orbitkv.inventory.session.ClockedSessions.awaitArmed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.List;
import java.util.UUID;
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
 * had its own thread, so none of these assertions could be made at an exact instant. The requester's timers live in
 * the sans-I/O {@link RequesterCore} (issue 38) and are driven here without threads, so they are exact and deterministic.
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
        pair = new ClockedSessions(InventoryConfig.defaults().withWindow(50, 200).withImmediateReadsPerWindow(0), QUIET, true); // the pure window (issue 37)
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
    @DisplayName("issue 38 DELTA-12 SES-14 the requester core's ACK leaves when virtual time passes the ACK interval, exactly, returning the delta's credit")
    void ackCadenceFollowsVirtualTime() {
        CoreDriver d = new CoreDriver(QUIET);
        d.resumed();
        long t = d.now;
        d.core.onFrame(d.stream, t, d.delta(2, 7, 8));
        long ackNanos = TimeUnit.MILLISECONDS.toNanos(SessionConfig.DEFAULT_ACK_INTERVAL_MS);
        assertThat(d.receiver.deltas.get()).as("the delta applied").isEqualTo(1);
        assertThat(d.core.deadlineNanos()).as("the ACK timer armed at the interval").isEqualTo(t + ackNanos);
        assertThat(d.core.onTimer(t + ackNanos - 1)).as("no ACK 1 ns before the interval").isEmpty();
        List<RequesterCore.Effect> acked = d.core.onTimer(t + ackNanos);
        assertThat(acked).singleElement().satisfies(e -> assertThat(((RequesterCore.Effect.Send) e).frame().getAck()
                .getConsumedThroughFrame()).as("the ACK covers the applied delta").isEqualTo(2));
        assertThat(d.core.deadlineNanos()).as("no ACK timer left; only the receive deadline").isEqualTo(t + d.core.silenceMaxNanos());
    }

    @Test
    @DisplayName("issue 38 DELTA-13 IDX-12 the requester core replaces a silent stream at exactly three liveness intervals of virtual time, and the next stream resumes")
    void receiveDeadlineFollowsVirtualTime() {
        SessionConfig config = SessionConfig.defaults().withLivenessIntervalMs(1000).withBackoffMs(2, 20, 2, 20);
        CoreDriver d = new CoreDriver(config);
        d.resumed();
        long deadline = d.now + RequesterCore.SILENT_LIVENESS_INTERVALS_MAX * 1000 * MS;
        assertThat(d.core.deadlineNanos()).as("the receive deadline").isEqualTo(deadline);

        assertThat(d.core.onTimer(deadline - 1)).as("not replaced 1 ns before the deadline").isEmpty();
        assertThat(d.core.connects()).isEqualTo(1);
        assertThat(d.core.lastErrorCause()).isEmpty();

        List<RequesterCore.Effect> ended = d.core.onTimer(deadline);
        assertThat(ended).hasSize(2);
        assertThat(ended.get(0)).isInstanceOf(RequesterCore.Effect.Abandon.class);
        assertThat(ended.get(1)).isInstanceOf(RequesterCore.Effect.Ended.class);
        assertThat(d.core.lastErrorCause()).isEqualTo(RequesterCore.RECEIVE_SILENCE_CAUSE);
        assertThat(d.core.deadlineNanos()).as("no timer while backing off").isEqualTo(Long.MAX_VALUE);

        List<RequesterCore.Effect> open = d.core.connect(deadline + 20 * MS, UUID.randomUUID(),
                d.receiver.installedCursor(d.source), true);
        assertThat(open).singleElement().satisfies(e -> assertThat(((RequesterCore.Effect.Send) e).frame().getOpen().hasResume())
                .as("the second stream resumes the installed view (SNAP-8)").isTrue());
        assertThat(d.core.connects()).isEqualTo(2);
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
