package orbitkv.server.incarnation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class AwaitRegistryTest {
    private static final AwaitRegistry.Result<String> PENDING =
            new AwaitRegistry.Result.Pending<>(MetadataRefusal.Reason.AWAIT_TIMEOUT, "not yet");

    @Test
    @DisplayName("API-4 INV-9 the waiter bound refuses the next waiter with TOO_MANY_WAITERS; a freed slot admits again")
    void waiterBound() throws Exception {
        AwaitRegistry registry = new AwaitRegistry(2);
        AtomicBoolean ready = new AtomicBoolean();
        CountDownLatch probing = new CountDownLatch(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<String>> waiters = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                waiters.add(pool.submit(() -> registry.await(20_000, () -> {
                    probing.countDown();
                    return ready.get() ? new AwaitRegistry.Result.Ready<>("done") : PENDING;
                })));
            }
            assertThat(probing.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(registry.waiting()).isEqualTo(2);
            assertThatThrownBy(() -> registry.await(1_000, () -> new AwaitRegistry.Result.Ready<>("x")))
                    .isInstanceOfSatisfying(MetadataRefusal.class, e -> assertThat(e.reason()).isEqualTo(MetadataRefusal.Reason.TOO_MANY_WAITERS));
            assertThat(registry.refusedTooMany()).isEqualTo(1);
            ready.set(true);
            registry.signal(); // a signal wakes every waiter
            for (Future<String> w : waiters) {
                assertThat(w.get(10, TimeUnit.SECONDS)).isEqualTo("done");
            }
            assertThat(registry.waiting()).isZero();
            assertThat(registry.await(1_000, () -> new AwaitRegistry.Result.Ready<>("again"))).isEqualTo("again");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("API-4 a waiter whose condition never holds is refused at its timeout with the probe's error")
    void timeout() {
        AwaitRegistry registry = new AwaitRegistry(1);
        assertThatThrownBy(() -> registry.await(50, () -> new AwaitRegistry.Result.Pending<>(MetadataRefusal.Reason.NOT_ADMITTED, "who?")))
                .isInstanceOfSatisfying(MetadataRefusal.class, e -> {
                    assertThat(e.reason()).isEqualTo(MetadataRefusal.Reason.NOT_ADMITTED);
                    assertThat(e.getMessage()).isEqualTo("who?");
                });
        assertThat(registry.timedOut()).isEqualTo(1);
        assertThat(registry.waiting()).isZero();
    }

    @Test
    @DisplayName("API-4 a signal between a probe and the wait is not lost; a probe's refusal ends the wait at once")
    void noLostWakeUpAndRefusal() throws Exception {
        AwaitRegistry registry = new AwaitRegistry(4);
        AtomicInteger probes = new AtomicInteger();
        // The first probe signals itself (as an install racing with the probe would): the waiter must re-probe
        // instead of sleeping until its 20 s timeout.
        String v = registry.await(20_000, () -> {
            if (probes.incrementAndGet() == 1) {
                registry.signal();
                return PENDING;
            }
            return new AwaitRegistry.Result.Ready<>("second probe");
        });
        assertThat(v).isEqualTo("second probe");
        assertThatThrownBy(() -> registry.await(20_000, () -> {
            throw new MetadataRefusal(MetadataRefusal.Reason.MEMBERSHIP_EXPIRED, "fenced");
        })).isInstanceOfSatisfying(MetadataRefusal.class, e -> assertThat(e.reason()).isEqualTo(MetadataRefusal.Reason.MEMBERSHIP_EXPIRED));
        assertThat(registry.waiting()).isZero();
    }
}
