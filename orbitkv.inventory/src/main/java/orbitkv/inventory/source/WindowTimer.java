package orbitkv.inventory.source;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The coalescing window of one reader (PUB-4, PUB-5, DIAG-3); see {@link CoalescingWindow} for the contract.
 * The window opens at the first observed unread mutation. The stream is idle when no read started during the last
 * {@code window}; from an idle stream the first {@code immediateReads} reads start at once (issue 37), and after them
 * (a backlog: mutations keep arriving while reads follow each other within a window) a read may start at
 * {@code min(lastArrival + window, opened + maxWait)} until the stream is idle again; immediately when
 * {@code maxWait == 0}, or at once while a flush-through target is above the cursor. The introduced delay (PUB-5)
 * is therefore 0 on an idle stream and at most {@code maxWait} under a backlog; under sustained churn a reader starts
 * at most {@code immediateReads} more reads than the pure window ({@code immediateReads == 0}) would.
 * The wait between opening and the first read start is observed once per opening in the intentional-wait histogram.
 *
 * <p>Test-only: {@link #TEST_DELAY_PROPERTY} (a system property read when a source opens a window; no Manager option
 * reaches it) adds a fixed wait after every opening, for the P1 smoke that must FAIL on a slowed build (issue 37).
 */
final class WindowTimer implements CoalescingWindow {
    /** Test-only system property: milliseconds every opened window waits before any read (0 or absent: none). */
    static final String TEST_DELAY_PROPERTY = "orbitkv.test.publicationDelayMs";

    private final long windowNanos;
    private final long maxWaitNanos;
    private final int immediateReads;
    private final long injectedDelayNanos;
    private final LongSupplier clock;
    private final SecondsRecorder intentionalWaitSeconds;
    private boolean hasRead;
    private long lastReadAt;
    private int backlogReads;
    private long observedHead;
    private boolean open;
    private boolean recorded;
    private long openedAt;
    private long lastArrivalAt;
    private long flushTarget;

    WindowTimer(long windowMs, long maxWaitMs, int immediateReads, long injectedDelayMs, LongSupplier clock,
            SecondsRecorder intentionalWaitSeconds) {
        this.windowNanos = TimeUnit.MILLISECONDS.toNanos(windowMs);
        this.maxWaitNanos = TimeUnit.MILLISECONDS.toNanos(maxWaitMs);
        this.immediateReads = immediateReads;
        this.injectedDelayNanos = TimeUnit.MILLISECONDS.toNanos(injectedDelayMs);
        this.clock = clock;
        this.intentionalWaitSeconds = intentionalWaitSeconds;
    }

    /** The test-only injected delay ({@link #TEST_DELAY_PROPERTY}); 0 unless a test set it. */
    static long testDelayMs() {
        return Math.max(0, Long.getLong(TEST_DELAY_PROPERTY, 0));
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
                if (!hasRead || now - lastReadAt >= windowNanos) {
                    backlogReads = 0; // no read during the last window: the stream is idle (issue 37)
                }
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
        long now = clock.getAsLong();
        if (injectedDelayNanos > 0 && now - (openedAt + injectedDelayNanos) < 0) {
            return new Decision.WaitUntil(openedAt + injectedDelayNanos); // test-only slowed build
        }
        if (maxWaitNanos == 0) {
            return new Decision.ReadNow(Reason.NO_WAIT);
        }
        if (backlogReads < immediateReads) { // judged when the window opened: waiting does not make it idle
            return new Decision.ReadNow(Reason.IDLE_STREAM);
        }
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
        backlogReads++; // reset only when a window opens on an idle stream
        hasRead = true;
        lastReadAt = now;
        if (open && !recorded) {
            intentionalWaitSeconds.observeNanos(now - openedAt);
            recorded = true;
        }
        if (readThrough >= observedHead) {
            open = false;
        }
    }
}
