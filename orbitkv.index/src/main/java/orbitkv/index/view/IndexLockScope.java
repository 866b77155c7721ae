package orbitkv.index.view;

import java.util.concurrent.atomic.AtomicLong;

/**
 * DELTA-4 instrumentation: records what runs while a thread holds an owner view's write lock, the lock every
 * lookup waits on. Frame preparation (validating, hashing and interning the namespaces of decoded records)
 * must run before the lock is taken; a preparation under it is counted, and the module's tests assert the
 * count stays zero over a workload of staged pages, commits, deltas and concurrent lookups. Network I/O never
 * happens inside the index at all: receivers are called with decoded batches and return before the session
 * sends anything. The hold depth is thread-local: one read per lock hold and per prepared frame.
 */
final class IndexLockScope {
    private static final ThreadLocal<int[]> DEPTH = ThreadLocal.withInitial(() -> new int[1]);
    private static final AtomicLong PREPARED_UNDER_LOCK = new AtomicLong();

    private IndexLockScope() {}

    /** Call right after taking an owner view's write lock. */
    static void entered() {
        DEPTH.get()[0]++;
    }

    /** Call right before releasing it. */
    static void left() {
        DEPTH.get()[0]--;
    }

    static boolean heldByCurrentThread() {
        return DEPTH.get()[0] > 0;
    }

    /** Call where a frame is prepared; counts a preparation under the write lock (a DELTA-4 violation). */
    static void preparing() {
        if (heldByCurrentThread()) {
            PREPARED_UNDER_LOCK.incrementAndGet();
        }
    }

    /** Frames prepared under an owner view's write lock since the process started (0 in a correct index). */
    static long preparedUnderLock() {
        return PREPARED_UNDER_LOCK.get();
    }
}
