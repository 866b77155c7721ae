package orbitkv.inventory.session;

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
import orbitkv.inventory.StateKey;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The session timers follow injected time (issue 25 item 1): each timer's effect happens exactly when virtual time
 * passes its due time, not a nanosecond earlier. Both ends' timers live in the sans-I/O cores ({@link RequesterCore},
 * {@link SourceCore}, issue 38) and are driven here without threads ({@link CoreDriver}, {@link CorePair}), so every
 * assertion is exact and deterministic however loaded the machine is (issue 38 acceptance: no thread races).
 */
@Tag("unit")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SessionClockTest {
    private static final long MS = 1_000_000L;
    /** Long enough that liveness never fires in the tests that do not advance past it. */
    private static final SessionConfig QUIET = SessionConfig.defaults().withLivenessIntervalMs(60_000).withBackoffMs(2, 20, 2, 20);

    @Test
    @DisplayName("issue 25 issue 38 PUB-4 the source core's coalescing window reads when virtual time passes the window, exactly: its intentional wait is the window")
    void coalescingWindowFiresWhenVirtualTimePassesIt() {
        CorePair pair = streamingPair(InventoryConfig.defaults().withWindow(50, 200).withImmediateReadsPerWindow(0), QUIET); // the pure window (issue 37)
        long t = pair.now;
        pair.source.put(key(1), Medium.DRAM, 10);
        pair.settle();
        assertThat(pair.sourceCore.deadlineNanos()).as("the pump's coalescing window armed").isEqualTo(t + 50 * MS);
        assertThat(pair.receiver.deltas.get()).as("nothing read while the window is open").isZero();

        pair.advanceTo(t + 50 * MS - 1);
        assertThat(pair.sourceCore.deadlineNanos()).as("the window still armed, 1 ns short").isEqualTo(t + 50 * MS);
        assertThat(pair.receiver.deltas.get()).as("1 ns before the window closes").isZero();

        pair.advanceTo(t + 50 * MS);
        assertThat(pair.receiver.deltas.get()).as("the delta read and applied once the window closed").isEqualTo(1);
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
    @DisplayName("issue 25 issue 38 DELTA-13 the source core sends liveness when virtual time passes the liveness interval, not before")
    void sourceLivenessFollowsVirtualTime() {
        SessionConfig config = SessionConfig.defaults().withLivenessIntervalMs(1000).withBackoffMs(2, 20, 2, 20);
        CorePair pair = streamingPair(InventoryConfig.defaults(), config);
        long due = pair.sourceCore.deadlineNanos();
        assertThat(due).as("liveness due one interval after the last frame").isEqualTo(pair.now + 1000 * MS);
        assertThat(pair.receiver.liveness.get()).isZero();

        pair.advanceTo(due - 1);
        assertThat(pair.sourceCore.deadlineNanos()).as("liveness still armed, 1 ns short").isEqualTo(due);
        assertThat(pair.receiver.liveness.get()).as("no liveness before the interval").isZero();

        pair.advanceTo(due);
        assertThat(pair.receiver.liveness.get()).as("one liveness frame received").isEqualTo(1);
        assertThat(pair.requesterCore.connects()).isEqualTo(1);
        assertThat(pair.sourceCore.deadlineNanos()).as("the next liveness one interval later").isEqualTo(due + 1000 * MS);
    }

    /** A source core and a requester core, bootstrapped and streaming, at one instant of virtual time. */
    private static CorePair streamingPair(InventoryConfig inventory, SessionConfig config) {
        CorePair pair = new CorePair(inventory, config);
        pair.connect();
        assertThat(pair.receiver.installs.get()).as("the view installed").isEqualTo(1);
        assertThat(pair.requesterCore.state()).isInstanceOf(RequesterState.Streaming.class);
        assertThat(pair.sourceCore.state()).isInstanceOf(SourceState.Streaming.class);
        return pair;
    }

    private static StateKey key(int i) {
        return new StateKey(Namespace.utf8("clock"), new byte[] {(byte) i});
    }
}
