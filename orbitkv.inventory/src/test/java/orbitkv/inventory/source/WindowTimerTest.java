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

    private SourceInventory source(long windowMs, long maxWaitMs) {
        return SourceInventory.of(InventorySource.create(InventoryConfig.defaults().withWindow(windowMs, maxWaitMs), now::get));
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
}
