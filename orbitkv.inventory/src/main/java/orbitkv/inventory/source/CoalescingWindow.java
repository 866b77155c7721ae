package orbitkv.inventory.source;

/**
 * A reader's coalescing window (PUB-4, PUB-5): decides when a reader holding cursor {@code c} may read an
 * unread head {@code h > c}. The window opens at the first unread mutation the reader observes; it reads at once
 * while the stream is idle (no read started during the last {@code coalescingWindowMs}; the first
 * {@code immediateReadsPerWindow} reads from an idle stream add no delay), otherwise once no further mutation arrived for {@code coalescingWindowMs},
 * and never later than
 * {@code maxIntentionalWaitMs} after the window opened (a window is never extended indefinitely;
 * {@code maxIntentionalWaitMs == 0} reads immediately). {@link #flushThrough(long)} bypasses the timer
 * until the reader's cursor reaches the target; byte bounds and order still apply because the read
 * itself is unchanged (PUB-4, API-2). The intentional wait actually introduced is recorded when a read
 * starts, in the source's intentional-wait histogram, apart from transport lag (DIAG-3).
 * One owner per instance (not thread-safe). Not a contract: the source end of the session is its only reader.
 */
public interface CoalescingWindow {
    /** The reader observed head {@code headSequence} while at {@code cursor}. */
    void observe(long cursor, long headSequence);

    /** Expose everything through {@code targetSequence} without waiting for the timer (API-2, PUB-4). */
    void flushThrough(long targetSequence);

    /** Whether the reader at {@code cursor} may read now. */
    Decision decide(long cursor);

    /**
     * The reader starts reading at {@code cursor}; records the intentional wait since the window opened
     * and closes the window if the read reaches the observed head.
     */
    void readStarted(long cursor, long readThrough);

    /** The decision. */
    sealed interface Decision permits Decision.ReadNow, Decision.WaitUntil, Decision.Idle {
        /** Read now, for {@code reason}. */
        record ReadNow(Reason reason) implements Decision {}

        /** Wait until {@code deadlineMonoNanos} (or a new observation), then decide again. */
        record WaitUntil(long deadlineMonoNanos) implements Decision {}

        /** Nothing unread. */
        record Idle() implements Decision {}
    }

    /** Why a read may start. */
    enum Reason {
        /** No intentional wait configured ({@code maxIntentionalWaitMs == 0}). */
        NO_WAIT,
        /** The stream is idle or its immediate-read budget since idle is not spent (issue 37, no wait added). */
        IDLE_STREAM,
        /** The quiet period after the latest mutation elapsed. */
        WINDOW_ELAPSED,
        /** The cap after the first unread mutation elapsed. */
        MAX_WAIT_ELAPSED,
        /** A flush-through target is not yet reached. */
        FLUSH_THROUGH
    }
}
