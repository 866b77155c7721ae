package orbitkv.inventory.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class SequenceSignalTest {
    @Test
    @DisplayName("DELTA-14 one journal append wakes every armed reader, once")
    void oneAppendWakesAllArmed() throws Exception {
        SourceInventory source = SourceInventory.of(InventorySource.create(InventoryConfig.defaults()));
        int readers = 8;
        CountDownLatch woken = new CountDownLatch(readers);
        AtomicInteger runs = new AtomicInteger();
        List<Runnable> wakes = new ArrayList<>();
        for (int i = 0; i < readers; i++) {
            Runnable wake = () -> {
                runs.incrementAndGet();
                woken.countDown();
            };
            wakes.add(wake);
            assertThat(source.armWakeAbove(0, wake)).isEqualTo(new AwaitOutcome.Armed(0));
        }
        assertThat(source.signalWaiters()).isEqualTo(readers);
        source.put(new StateKey(Namespace.utf8("a"), new byte[] {1}), Medium.DRAM, 1);
        assertThat(woken.await(10, TimeUnit.SECONDS)).as("every armed reader woken").isTrue();
        assertThat(source.signalWaiters()).as("a wake-up is one-shot").isZero();
        source.put(new StateKey(Namespace.utf8("a"), new byte[] {2}), Medium.DRAM, 1);
        assertThat(runs.get()).as("no second run without re-arming").isEqualTo(readers);
    }

    @Test
    @DisplayName("DELTA-14 a reader that is already behind is not armed; a wake-up runs only above its seen sequence")
    void alreadyAdvancedAndSeenSequence() {
        SequenceSignal signal = new SequenceSignal(4);
        signal.publish(3);
        AtomicInteger runs = new AtomicInteger();
        Runnable wake = runs::incrementAndGet;
        assertThat(signal.arm(2, wake)).isEqualTo(new AwaitOutcome.Advanced(3));
        assertThat(signal.waiting()).isZero();
        assertThat(signal.arm(4, wake)).isEqualTo(new AwaitOutcome.Armed(3));
        signal.publish(4);
        assertThat(runs.get()).as("head 4 is not above the seen 4").isZero();
        signal.publish(5);
        assertThat(runs.get()).isEqualTo(1);
        signal.publish(2);
        assertThat(signal.published()).as("the published head never goes back").isEqualTo(5);
    }

    @Test
    @DisplayName("INV-9 armed readers are bounded: beyond waitersMax a reader is refused explicitly; re-arming keeps one slot")
    void armedAreBounded() {
        SequenceSignal signal = new SequenceSignal(2);
        Runnable a = () -> {};
        Runnable b = () -> {};
        assertThat(signal.arm(0, a)).isInstanceOf(AwaitOutcome.Armed.class);
        assertThat(signal.arm(0, a)).as("re-arming the same wake-up").isInstanceOf(AwaitOutcome.Armed.class);
        assertThat(signal.arm(0, b)).isInstanceOf(AwaitOutcome.Armed.class);
        assertThat(signal.arm(0, () -> {})).isEqualTo(new AwaitOutcome.WaitersExhausted(2));
        signal.disarm(a);
        assertThat(signal.waiting()).isEqualTo(1);
        assertThat(signal.arm(0, () -> {})).as("a disarmed slot is free again").isInstanceOf(AwaitOutcome.Armed.class);
    }

    @Test
    @DisplayName("DELTA-14 no lost wake-up: arming races with appends from another thread, every armed round is woken")
    void noLostWakeUp() throws Exception {
        SequenceSignal signal = new SequenceSignal(1);
        int rounds = 20_000;
        Thread publisher = Thread.ofPlatform().start(() -> {
            for (long s = 1; s <= rounds; s++) {
                signal.publish(s);
            }
        });
        long seen = 0;
        while (seen < rounds) {
            CountDownLatch woken = new CountDownLatch(1);
            AwaitOutcome o = signal.arm(seen, woken::countDown);
            if (o instanceof AwaitOutcome.Armed) {
                assertThat(woken.await(10, TimeUnit.SECONDS)).as("armed at %d and never woken", seen).isTrue();
            }
            seen = signal.published();
        }
        publisher.join(10_000);
        assertThat(signal.waiting()).isZero();
    }
}
