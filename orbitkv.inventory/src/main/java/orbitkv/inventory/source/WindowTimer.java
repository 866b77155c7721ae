package orbitkv.inventory.source;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The coalescing window of one reader (PUB-4, PUB-5, DIAG-3); see {@link CoalescingWindow} for the contract.
 * The window opens at the first observed unread mutation; a read may start at
 * {@code min(lastArrival + window, opened + maxWait)}, immediately when {@code maxWait == 0}, or at once
 * while a flush-through target is above the cursor. The wait between opening and the first read start is
 * observed once per opening in the intentional-wait histogram.
 */
final class WindowTimer implements CoalescingWindow {
    private final long windowNanos;
    private final long maxWaitNanos;
    private final LongSupplier clock;
    private final SecondsRecorder intentionalWaitSeconds;
    private long observedHead;
    private boolean open;
    private boolean recorded;
    private long openedAt;
    private long lastArrivalAt;
    private long flushTarget;

    WindowTimer(long windowMs, long maxWaitMs, LongSupplier clock, SecondsRecorder intentionalWaitSeconds) {
        this.windowNanos = TimeUnit.MILLISECONDS.toNanos(windowMs);
        this.maxWaitNanos = TimeUnit.MILLISECONDS.toNanos(maxWaitMs);
        this.clock = clock;
        this.intentionalWaitSeconds = intentionalWaitSeconds;
    }

    @Override
    public void observe(long cursor, long headSequence) {
        if (headSequence <= observedHead) {
            return;
        }
        long now = clock.getAsLong();
        observedHead = headSequence;
        if (headSequence > cursor) {
            if (!open) {
                open = true;
                recorded = false;
                openedAt = now;
            }
            lastArrivalAt = now;
        }
    }

    @Override
    public void flushThrough(long targetSequence) {
        flushTarget = Math.max(flushTarget, targetSequence);
    }

    @Override
    public Decision decide(long cursor) {
        if (flushTarget > cursor) {
            return new Decision.ReadNow(Reason.FLUSH_THROUGH);
        }
        if (!open || observedHead <= cursor) {
            return new Decision.Idle();
        }
        if (maxWaitNanos == 0) {
            return new Decision.ReadNow(Reason.NO_WAIT);
        }
        long now = clock.getAsLong();
        long quietAt = lastArrivalAt + windowNanos;
        long capAt = openedAt + maxWaitNanos;
        if (now - quietAt >= 0) {
            return new Decision.ReadNow(Reason.WINDOW_ELAPSED);
        }
        if (now - capAt >= 0) {
            return new Decision.ReadNow(Reason.MAX_WAIT_ELAPSED);
        }
        return new Decision.WaitUntil(quietAt - capAt < 0 ? quietAt : capAt);
    }

    @Override
    public void readStarted(long cursor, long readThrough) {
        long now = clock.getAsLong();
        if (open && !recorded) {
            intentionalWaitSeconds.observeNanos(now - openedAt);
            recorded = true;
        }
        if (readThrough >= observedHead) {
            open = false;
        }
    }
}
