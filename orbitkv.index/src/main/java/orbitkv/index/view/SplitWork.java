package orbitkv.index.view;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs two independent halves of one piece of work: the caller's half on the caller, the other offered to a
 * helper executor. Whichever of the two threads gets to the other half first runs it, so the caller never
 * waits for a helper that has not started (a saturated or shut-down executor only makes the work serial),
 * and it never returns before both halves are done: their writes are visible to the caller afterwards.
 *
 * <p>Used by the staging table build at commit ({@link ResidenceTable#ofDistinctRows}), which runs under the
 * owner view's lock after the last page, when the source has finished and the second core would idle.
 */
final class SplitWork {
    private SplitWork() {}

    /**
     * Runs {@code mine} and {@code other}, {@code other} on {@code helper} if it starts in time; with a null
     * helper both run on the caller, {@code mine} first. A failure of either half is thrown here, after both
     * have ended.
     */
    static void run(Executor helper, Runnable mine, Runnable other) {
        if (helper == null) {
            mine.run();
            other.run();
            return;
        }
        AtomicBoolean claimed = new AtomicBoolean();
        CountDownLatch helperDone = new CountDownLatch(1);
        Throwable[] helperFailure = new Throwable[1];
        try {
            helper.execute(() -> {
                if (claimed.compareAndSet(false, true)) {
                    try {
                        other.run();
                    } catch (Throwable t) {
                        helperFailure[0] = t;
                    } finally {
                        helperDone.countDown();
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            // Not offered: the caller runs both halves below.
        }
        mine.run();
        if (claimed.compareAndSet(false, true)) {
            other.run();
            return;
        }
        awaitUninterruptibly(helperDone);
        Throwable t = helperFailure[0];
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        if (t != null) {
            throw new IllegalStateException("helper half failed", t);
        }
    }

    /** The helper's half is already running and writes into shared arrays: it must end before the caller goes on. */
    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
