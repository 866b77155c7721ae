package orbitkv.inventory.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import orbitkv.testing.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The gRPC shell's gate over the {@link SendScheduler} (ROUTE-10, issue 39 item 5) with real threads: a pump thread
 * beyond the permits blocks; a FlushThrough that arrives while a session waits raises it in place
 * ({@link SendGate#reclass}); the release wakes the session the scheduler chose. Order is decided by the gate, not by
 * timing: each thread records itself only once granted, and is granted only after the previous one released.
 */
@Tag("unit")
class SendGateTest {
    @Test
    @DisplayName("ROUTE-10: a session raised by a barrier while it waits runs before earlier bulk work; the running bulk step is told to yield")
    void barrierWaitingRunsFirst() throws Exception {
        assertEquals(List.of("barrier", "bulk-b"), order(true));
    }

    @Test
    @DisplayName("ROUTE-10: with priority off the gate is first come first served and never asks a step to yield")
    void priorityOffIsFirstComeFirstServed() throws Exception {
        assertEquals(List.of("bulk-b", "barrier"), order(false));
    }

    private static List<String> order(boolean priority) throws Exception {
        SendGate<String> gate = new SendGate<>(1, 8, priority);
        assertTrue(gate.acquire("bulk-a", SendPriority.NORMAL));
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        Thread b = Thread.ofVirtual().start(() -> step(gate, "bulk-b", order));
        Await.inJvm("bulk-b waits", Duration.ofSeconds(30), () -> gate.queued() == 1);
        Thread c = Thread.ofVirtual().start(() -> step(gate, "barrier", order));
        Await.inJvm("the barrier's session waits", Duration.ofSeconds(30), () -> gate.queued() == 2);
        assertFalse(gate.shouldYield("bulk-a"));
        gate.reclass("barrier", SendPriority.BARRIER); // a FlushThrough arrived while it waited
        assertEquals(priority, gate.shouldYield("bulk-a"));
        gate.release("bulk-a");
        assertTrue(b.join(Duration.ofSeconds(60)) && c.join(Duration.ofSeconds(60)), "both steps ran");
        assertEquals(0, gate.queued());
        assertEquals(0, gate.refusals());
        return order;
    }

    private static void step(SendGate<String> gate, String key, List<String> order) {
        try {
            if (gate.acquire(key, SendPriority.NORMAL)) {
                order.add(key);
                gate.release(key);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
