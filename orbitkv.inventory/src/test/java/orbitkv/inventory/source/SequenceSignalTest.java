package orbitkv.inventory.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.AwaitOutcome;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SequenceSignalTest {
    private static final long LONG_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

    /** Bounded wait for a condition; no sleep-based synchronization. */
    static void awaitCondition(java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("condition within 10 s").isNegative();
            Thread.onSpinWait();
        }
    }

    @Test
    @DisplayName("DELTA-14 one journal append wakes every waiting reader")
    void oneAppendWakesAllWaiters() throws Exception {
        SourceInventory source = (SourceInventory) InventorySource.create(InventoryConfig.defaults());
        int readers = 8;
        ExecutorService pool = Executors.newFixedThreadPool(readers);
        try {
            List<Future<AwaitOutcome>> waits = new ArrayList<>();
            for (int i = 0; i < readers; i++) {
                waits.add(pool.submit(() -> source.awaitAbove(0, LONG_WAIT_NANOS)));
            }
            awaitCondition(() -> source.signalWaiters() == readers);
            source.put(new StateKey(Namespace.utf8("a"), new byte[] {1}), Medium.DRAM, 1);
            for (Future<AwaitOutcome> w : waits) {
                assertThat(w.get(10, TimeUnit.SECONDS)).isEqualTo(new AwaitOutcome.Advanced(1));
            }
            assertThat(source.signalWaiters()).isZero();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("DELTA-14 a reader that is already behind returns at once; a timeout reports the unchanged head")
    void alreadyAdvancedAndTimeout() throws Exception {
        SequenceSignal signal = new SequenceSignal(4);
        signal.publish(3);
        assertThat(signal.awaitAbove(2, 0)).isEqualTo(new AwaitOutcome.Advanced(3));
        assertThat(signal.awaitAbove(3, 0)).isEqualTo(new AwaitOutcome.TimedOut(3));
        assertThat(signal.awaitAbove(3, TimeUnit.MILLISECONDS.toNanos(1))).isEqualTo(new AwaitOutcome.TimedOut(3));
        signal.publish(2);
        assertThat(signal.published()).as("the published head never goes back").isEqualTo(3);
    }

    @Test
    @DisplayName("INV-9 waiters are bounded: beyond waitersMax a reader is refused explicitly")
    void waitersAreBounded() throws Exception {
        SequenceSignal signal = new SequenceSignal(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<AwaitOutcome> a = pool.submit(() -> signal.awaitAbove(0, LONG_WAIT_NANOS));
            Future<AwaitOutcome> b = pool.submit(() -> signal.awaitAbove(0, LONG_WAIT_NANOS));
            awaitCondition(() -> signal.waiting() == 2);
            assertThat(signal.awaitAbove(0, LONG_WAIT_NANOS)).isEqualTo(new AwaitOutcome.WaitersExhausted(2));
            signal.publish(1);
            assertThat(a.get(10, TimeUnit.SECONDS)).isEqualTo(new AwaitOutcome.Advanced(1));
            assertThat(b.get(10, TimeUnit.SECONDS)).isEqualTo(new AwaitOutcome.Advanced(1));
        } finally {
            pool.shutdownNow();
        }
    }
}
