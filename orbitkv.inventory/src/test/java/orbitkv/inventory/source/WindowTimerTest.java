package orbitkv.inventory.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.inventory.source.CoalescingWindow.Decision;
import orbitkv.inventory.source.CoalescingWindow.Reason;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class WindowTimerTest {
    private final AtomicLong now = new AtomicLong(1_000_000_000L);

    /** The pure window (no immediate reads), as before issue 37: every read waits for the quiet period or the cap. */
    private SourceInventory source(long windowMs, long maxWaitMs) {
        return source(windowMs, maxWaitMs, 0);
    }

    private SourceInventory source(long windowMs, long maxWaitMs, int immediateReads) {
        return SourceInventory.of(InventorySource.create(InventoryConfig.defaults().withWindow(windowMs, maxWaitMs)
                .withImmediateReadsPerWindow(immediateReads), now::get));
    }

    private void advanceMs(double ms) {
        now.addAndGet((long) (ms * 1_000_000));
    }

    @Test
    @DisplayName("PUB-5 nothing unread: idle")
    void idle() {
        CoalescingWindow w = source(2, 5).openWindow();
        w.observe(0, 0);
        assertThat(w.decide(0)).isEqualTo(new Decision.Idle());
    }

    @Test
    @DisplayName("PUB-5 the window reads after 2 ms without a further mutation")
    void quietWindow() {
        CoalescingWindow w = source(2, 5).openWindow();
        long opened = now.get();
        w.observe(0, 1);
        assertThat(w.decide(0)).isEqualTo(new Decision.WaitUntil(opened + TimeUnit.MILLISECONDS.toNanos(2)));
        advanceMs(2);
        assertThat(w.decide(0)).isEqualTo(new Decision.ReadNow(Reason.WINDOW_ELAPSED));
    }

    @Test
    @DisplayName("PUB-5 continuous mutations never extend the wait beyond 5 ms after the first unread one")
    void capNeverExtended() {
        SourceInventory s = source(2, 5);
        CoalescingWindow w = s.openWindow();
        long opened = now.get();
        for (long head = 1; head <= 4; head++) {
            w.observe(0, head);
            assertThat(w.decide(0)).isInstanceOf(Decision.WaitUntil.class);
            advanceMs(1.5);
        }
        // 6 ms after opening, the last arrival was 1.5 ms ago: the quiet window is not over, the cap is.
        w.observe(0, 5);
        assertThat(w.decide(0)).isEqualTo(new Decision.ReadNow(Reason.MAX_WAIT_ELAPSED));
        w.readStarted(0, 5);
        assertThat(s.intentionalWaitSeconds().count()).isEqualTo(1);
        assertThat(s.intentionalWaitSeconds().sumSeconds()).isEqualTo((now.get() - opened) / 1e9);
    }

    @Test
    @DisplayName("PUB-5 maxIntentionalWaitMs 0 reads immediately and records a zero wait")
    void noWait() {
        SourceInventory s = source(0, 0);
        CoalescingWindow w = s.openWindow();
        w.observe(0, 1);
        assertThat(w.decide(0)).isEqualTo(new Decision.ReadNow(Reason.NO_WAIT));
        w.readStarted(0, 1);
        assertThat(s.intentionalWaitSeconds().count()).isEqualTo(1);
        assertThat(s.intentionalWaitSeconds().sumSeconds()).isZero();
    }

    @Test
    @DisplayName("PUB-4 API-2 flush-through bypasses the timer until the cursor reaches the target")
    void flushThrough() {
        CoalescingWindow w = source(2, 5).openWindow();
        w.observe(0, 3);
        w.flushThrough(2);
        assertThat(w.decide(0)).isEqualTo(new Decision.ReadNow(Reason.FLUSH_THROUGH));
        assertThat(w.decide(1)).isEqualTo(new Decision.ReadNow(Reason.FLUSH_THROUGH));
        assertThat(w.decide(2)).as("target reached: back to the timer").isInstanceOf(Decision.WaitUntil.class);
    }

    @Test
    @DisplayName("DIAG-3 the intentional wait is recorded once per window opening, and a read to the head closes it")
    void recordedOncePerOpening() {
        SourceInventory s = source(2, 5);
        CoalescingWindow w = s.openWindow();
        w.observe(0, 4);
        advanceMs(2);
        w.readStarted(0, 2);
        assertThat(w.decide(2)).as("unread rest after a bounded read").isEqualTo(new Decision.ReadNow(Reason.WINDOW_ELAPSED));
        w.readStarted(2, 4);
        assertThat(w.decide(4)).isEqualTo(new Decision.Idle());
        assertThat(s.intentionalWaitSeconds().count()).isEqualTo(1);
        w.observe(4, 5);
        assertThat(w.decide(4)).isInstanceOf(Decision.WaitUntil.class);
    }

    @Test
    @DisplayName("issue 37 PUB-5 an idle stream reads the first unread mutation at once and records a zero intentional wait")
    void idleStreamReadsAtOnce() {
        SourceInventory s = source(2, 5, InventoryConfig.DEFAULT_IMMEDIATE_READS_PER_WINDOW);
        CoalescingWindow w = s.openWindow();
        w.observe(0, 1);
        assertThat(w.decide(0)).isEqualTo(new Decision.ReadNow(Reason.IDLE_STREAM));
        w.readStarted(0, 1);
        assertThat(w.decide(1)).isEqualTo(new Decision.Idle());
        assertThat(s.intentionalWaitSeconds().count()).isEqualTo(1);
        assertThat(s.intentionalWaitSeconds().sumSeconds()).as("the delay PUB-5 measures is 0 on an idle stream").isZero();
    }

    @Test
    @DisplayName("issue 37 PUB-5 a backlog beyond the budget coalesces again: the fifth read in one window period waits for the window, capped")
    void backlogCoalescesAfterTheBudget() {
        SourceInventory s = source(2, 5, 4);
        CoalescingWindow w = s.openWindow();
        for (long head = 1; head <= 4; head++) {
            w.observe(head - 1, head);
            assertThat(w.decide(head - 1)).as("read " + head + " of the period").isEqualTo(new Decision.ReadNow(Reason.IDLE_STREAM));
            w.readStarted(head - 1, head);
            advanceMs(0.1);
        }
        long opened = now.get();
        w.observe(4, 5);
        assertThat(w.decide(4)).as("budget spent: the quiet window applies").isEqualTo(new Decision.WaitUntil(opened + TimeUnit.MILLISECONDS.toNanos(2)));
        for (int i = 0; i < 3; i++) {
            advanceMs(1.5);
            w.observe(4, 6 + i); // continuous churn
            assertThat(w.decide(4)).isInstanceOf(Decision.WaitUntil.class);
        }
        advanceMs(0.5);
        assertThat(w.decide(4)).as("never later than the cap after the opening").isEqualTo(new Decision.ReadNow(Reason.MAX_WAIT_ELAPSED));
        w.readStarted(4, 8);
        assertThat(s.intentionalWaitSeconds().sumSeconds()).isEqualTo(5e-3);
        advanceMs(1.5);
        w.observe(8, 9);
        assertThat(w.decide(8)).as("the churn goes on: still a backlog, no new budget").isInstanceOf(Decision.WaitUntil.class);
    }

    @Test
    @DisplayName("issue 37 the budget returns once no read started for a whole window before the opening: the stream is idle again")
    void budgetReturnsWhenTheStreamIsIdle() {
        CoalescingWindow busy = source(2, 5, 1).openWindow();
        busy.observe(0, 1);
        assertThat(busy.decide(0)).isEqualTo(new Decision.ReadNow(Reason.IDLE_STREAM));
        busy.readStarted(0, 1);
        now.addAndGet(1_999_999);
        busy.observe(1, 2);
        assertThat(busy.decide(1)).as("opened 1 ns short of a window after the last read: a backlog").isInstanceOf(Decision.WaitUntil.class);
        now.addAndGet(1_000_000);
        assertThat(busy.decide(1)).as("waiting does not make it idle; the quiet period still applies")
                .isEqualTo(new Decision.WaitUntil(now.get() + 1_000_000));
        CoalescingWindow idle = source(2, 5, 1).openWindow();
        idle.observe(0, 1);
        idle.readStarted(0, 1);
        now.addAndGet(2_000_000);
        idle.observe(1, 2);
        assertThat(idle.decide(1)).as("opened a whole window after the last read: idle again").isEqualTo(new Decision.ReadNow(Reason.IDLE_STREAM));
    }

    @Test
    @DisplayName("issue 37 budget 0 is the pure window, and the budget is bounded (a named error, BND-6)")
    void zeroBudgetIsThePureWindowAndTheBudgetIsBounded() {
        CoalescingWindow w = source(2, 5, 0).openWindow();
        w.observe(0, 1);
        assertThat(w.decide(0)).isInstanceOf(Decision.WaitUntil.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> InventoryConfig.defaults().withImmediateReadsPerWindow(65))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("immediateReadsPerWindow (65)")
                .hasMessageContaining("IMMEDIATE_READS_PER_WINDOW_MAX (64)");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> InventoryConfig.defaults().withImmediateReadsPerWindow(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("immediateReadsPerWindow (-1)");
    }

    @Test
    @DisplayName("issue 37 the test-only injected delay holds every opened window for its length (the slowed build of the P1 smoke)")
    void injectedDelayHoldsTheWindow() {
        WindowTimer w = new WindowTimer(2, 5, 4, 100, now::get, new SecondsRecorder(0.001));
        long opened = now.get();
        w.observe(0, 1);
        assertThat(w.decide(0)).isEqualTo(new Decision.WaitUntil(opened + TimeUnit.MILLISECONDS.toNanos(100)));
        advanceMs(100);
        assertThat(w.decide(0)).isEqualTo(new Decision.ReadNow(Reason.IDLE_STREAM));
        assertThat(WindowTimer.testDelayMs()).as("off unless a test sets " + WindowTimer.TEST_DELAY_PROPERTY).isZero();
    }
}
