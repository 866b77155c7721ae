package orbitkv.server.runtime;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs a Manager's stop steps exactly once; a concurrent or later caller waits for the first to finish
 * (SIGTERM and SIGINT may both arrive, and a test may call shutdown too).
 */
final class StopSequence {
    /** The steps; returns whether admitted requests drained within their bound. */
    @FunctionalInterface
    interface Steps {
        boolean run() throws InterruptedException;
    }

    private final AtomicBoolean started = new AtomicBoolean();
    private final CountDownLatch done = new CountDownLatch(1);

    boolean runOnce(Steps steps) throws InterruptedException {
        if (!started.compareAndSet(false, true)) {
            done.await();
            return true;
        }
        try {
            return steps.run();
        } finally {
            done.countDown();
        }
    }

    void awaitDone() throws InterruptedException {
        done.await();
    }
}
