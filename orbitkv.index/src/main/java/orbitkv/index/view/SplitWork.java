package orbitkv.index.view;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs two independent halves of one piece of work: the caller's half on the caller, the other offered to a
 * helper executor. Whichever of the two threads gets to the other half first runs it, so the caller never
 * waits for a helper that has not started (a saturated or shut-down executor only makes the work serial),
 * and it never returns while a half it offered is still running: their writes are visible to the caller afterwards.
 *
 * <p>Used by the staging table build at commit ({@link ResidenceTable#ofDistinctRows}), which runs under the
 * owner view's lock after the last page, when the source has finished and the second core would idle.
 */
final class SplitWork {
    private SplitWork() {}

    /**
     * Runs {@code mine} and {@code other}, {@code other} on {@code helper} if it starts in time; with a null
     * helper both run on the caller, {@code mine} first. A failure of either half is thrown here, after a
     * started helper half has ended; if {@code mine} fails before the helper started {@code other}, nobody
     * runs {@code other}.
     */
    static void run(Executor helper, Runnable mine, Runnable other) {
        if (helper == null) {
            mine.run();
            other.run();
            return;
        }
        // The other half is claimed by taking it out of this reference: whoever takes it runs it, and a helper
        // task that starts late holds nothing (not the build's arrays) while it waits in the executor's queue.
        AtomicReference<Runnable> unclaimed = new AtomicReference<>(other);
        CountDownLatch helperDone = new CountDownLatch(1);
        Throwable[] helperFailure = new Throwable[1];
        try {
            helper.execute(() -> {
                Runnable half = unclaimed.getAndSet(null);
                if (half != null) {
                    try {
                        half.run();
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
        Throwable failure = null;
        try {
            mine.run();
        } catch (Throwable t) {
            failure = t;
        }
        Runnable half = unclaimed.getAndSet(null);
        if (half != null) {
            if (failure == null) {
                half.run(); // the helper never started it; after a failure of mine, nobody runs it
            }
        } else {
            awaitUninterruptibly(helperDone);
            Throwable h = helperFailure[0];
            if (h != null && failure != null) {
                failure.addSuppressed(h);
            } else if (h != null) {
                failure = h;
            }
        }
        if (failure instanceof RuntimeException r) {
            throw r;
        }
        if (failure instanceof Error e) {
            throw e;
        }
        if (failure != null) {
            throw new IllegalStateException("a half of a split build failed", failure);
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
