package orbitkv.inventory.session;

/**
 * The class a source session's send work is scheduled at (ROUTE-10, issue 39 item 5). Priority chooses only which
 * session's pump step runs next ({@link SendScheduler}); it never changes what a step sends or in which order.
 * Higher ordinals outrank lower ones.
 */
enum SendPriority {
    /** Every subscription not named in {@code SessionConfig.priorityRequesters}. */
    NORMAL,
    /** A whole subscription the source was configured to favour ({@code SessionConfig.priorityRequesters}). */
    HIGH,
    /** A session an explicit barrier (a FlushThrough, PUB-4) waits on, until the barrier's target is sent. */
    BARRIER
}
