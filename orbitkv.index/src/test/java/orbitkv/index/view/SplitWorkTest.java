package orbitkv.index.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The two-way split of a staging build's passes: both halves always run exactly once, the caller never waits
 * for a half that has not started, and never returns before a started half has ended.
 */
@Tag("unit")
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SplitWorkTest {
    private final List<String> ran = Collections.synchronizedList(new ArrayList<>());

    @Test
    @DisplayName("without a helper, or with one that refuses, the caller runs both halves, its own first")
    void callerAlone() {
        SplitWork.run(null, () -> ran.add("mine"), () -> ran.add("other"));
        assertThat(ran).containsExactly("mine", "other");
        ran.clear();
        Executor refusing = task -> {
            throw new RejectedExecutionException("full");
        };
        SplitWork.run(refusing, () -> ran.add("mine"), () -> ran.add("other"));
        assertThat(ran).containsExactly("mine", "other");
    }

    @Test
    @DisplayName("a helper that runs the offered half at once runs it once; the caller does not run it again")
    void helperRunsAtOnce() {
        SplitWork.run(Runnable::run, () -> ran.add("mine"), () -> ran.add("other"));
        assertThat(ran).containsExactly("other", "mine");
    }

    @Test
    @DisplayName("a helper that has not started the half when the caller is done: the caller runs it, and the helper's late start does nothing")
    void helperTooLateIsClaimedByCaller() {
        List<Runnable> held = new ArrayList<>();
        SplitWork.run(held::add, () -> ran.add("mine"), () -> ran.add("other:" + Thread.currentThread().getName()));
        assertThat(ran).containsExactly("mine", "other:" + Thread.currentThread().getName());
        held.forEach(Runnable::run);
        assertThat(ran).hasSize(2);
    }

    @Test
    @DisplayName("a half the helper has started is awaited: run returns only after it ended, and sees its writes")
    void startedHalfIsAwaited() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        int[] written = new int[1];
        Executor thread = task -> Thread.ofPlatform().name("split-helper").start(task);
        Thread caller = Thread.currentThread();
        SplitWork.run(thread, () -> {
            await(started);
            ran.add("mine");
            // Let the helper finish only after the caller is done with its half and is about to wait.
            Thread.ofPlatform().start(() -> {
                awaitWaiting(caller);
                release.countDown();
            });
        }, () -> {
            started.countDown();
            await(release);
            written[0] = 42;
            ran.add("other");
        });
        assertThat(ran).containsExactly("mine", "other");
        assertThat(written[0]).isEqualTo(42);
    }

    @Test
    @DisplayName("a failure of the helper's half is thrown to the caller after both halves ended")
    void helperFailureReachesCaller() {
        CountDownLatch started = new CountDownLatch(1);
        Executor thread = task -> Thread.ofPlatform().start(task);
        assertThatThrownBy(() -> SplitWork.run(thread, () -> {
            await(started);
            ran.add("mine");
        }, () -> {
            started.countDown();
            throw new IllegalStateException("half failed");
        })).isInstanceOf(IllegalStateException.class).hasMessage("half failed");
        assertThat(ran).containsExactly("mine");
    }

    @Test
    @DisplayName("a failure of the caller's half: a half not yet started never runs, a started one is awaited first")
    void callerFailure() {
        List<Runnable> held = new ArrayList<>();
        assertThatThrownBy(() -> SplitWork.run(held::add, () -> {
            throw new IllegalStateException("mine failed");
        }, () -> ran.add("other"))).hasMessage("mine failed");
        held.forEach(Runnable::run);
        assertThat(ran).as("claimed by the failing caller, so the late helper runs nothing").isEmpty();

        CountDownLatch started = new CountDownLatch(1);
        Executor thread = task -> Thread.ofPlatform().start(task);
        assertThatThrownBy(() -> SplitWork.run(thread, () -> {
            await(started);
            throw new IllegalStateException("mine failed while the other ran");
        }, () -> {
            started.countDown();
            ran.add("other");
        })).hasMessage("mine failed while the other ran");
        assertThat(ran).as("the started half ended before the failure was thrown").containsExactly("other");
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(20, TimeUnit.SECONDS)) {
                throw new AssertionError("latch not released within 20 s");
            }
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** Waits, bounded, until {@code t} is parked or waiting (the caller blocked on the helper's latch). */
    private static void awaitWaiting(Thread t) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING) {
            if (System.nanoTime() > until) {
                throw new AssertionError("caller never waited for the started half");
            }
            Thread.onSpinWait();
        }
    }
}
