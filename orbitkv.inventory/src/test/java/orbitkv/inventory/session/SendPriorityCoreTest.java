package orbitkv.inventory.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.Medium;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.StateKey;
import orbitkv.membership.NodeId;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The source core's class for the shared send scheduling (ROUTE-10, issue 39 item 5) on the production cores wired
 * without threads ({@link CorePair}): a barrier raises the session until its target is sent, a favoured requester's
 * whole subscription is HIGH, priority off is NORMAL; and yielding between actions never changes what is sent.
 */
@Tag("unit")
class SendPriorityCoreTest {
    static final Namespace NS = Namespace.utf8("ns");
    static final InventoryConfig INVENTORY = InventoryConfig.defaults().withPageRecordsMax(3).withInputRecordsMax(4);

    static StateKey key(int i) {
        return new StateKey(NS, new byte[] {(byte) (i >>> 8), (byte) i});
    }

    static long put(CorePair p, int i) {
        return ((MutationResult.Recorded) p.source.put(key(i), Medium.DRAM, 100 + i)).record().sequence();
    }

    @Test
    @DisplayName("ROUTE-10 PUB-4: a barrier raises the session to BARRIER until its target is sent, then it returns to its class")
    void barrierRaisesUntilSent() {
        CorePair p = new CorePair(INVENTORY, SessionConfig.defaults());
        p.connect();
        assertInstanceOf(SourceState.Streaming.class, p.sourceCore.state());
        assertEquals(SendPriority.NORMAL, p.sourceCore.sendPriority());
        long seq = put(p, 1);
        p.requesterFlush(seq);
        p.deliverNext(); // the source receives the FlushThrough; its pump has not run
        assertEquals(SendPriority.BARRIER, p.sourceCore.sendPriority());
        p.settle();
        assertEquals(seq, p.receiver.appliedThrough.get());
        assertEquals(SendPriority.NORMAL, p.sourceCore.sendPriority());
        p.requesterFlush(seq + 100); // beyond the head: nothing to hold the session raised for
        p.deliverNext();
        assertEquals(SendPriority.NORMAL, p.sourceCore.sendPriority());
    }

    @Test
    @DisplayName("ROUTE-10: a favoured requester's whole subscription is HIGH; a barrier still outranks it; priority off is NORMAL")
    void favouredSubscriptionAndPriorityOff() {
        CorePair favoured = new CorePair(INVENTORY, SessionConfig.defaults().withSendScheduling(1, true, Set.of(new NodeId("req"))));
        favoured.connect();
        assertEquals(SendPriority.HIGH, favoured.sourceCore.sendPriority());
        favoured.requesterFlush(put(favoured, 1));
        favoured.deliverNext();
        assertEquals(SendPriority.BARRIER, favoured.sourceCore.sendPriority());
        favoured.settle();
        assertEquals(SendPriority.HIGH, favoured.sourceCore.sendPriority());

        CorePair off = new CorePair(INVENTORY, SessionConfig.defaults().withSendScheduling(1, false, Set.of(new NodeId("req"))));
        off.connect();
        off.requesterFlush(put(off, 1));
        off.deliverNext();
        assertEquals(SendPriority.NORMAL, off.sourceCore.sendPriority());
    }

    @Test
    @DisplayName("ROUTE-10: a step that yields after every action sends the same frames, byte for byte, in the same order")
    void yieldingNeverReorders() {
        CorePair plain = new CorePair(INVENTORY, SessionConfig.defaults());
        CorePair yielding = new CorePair(INVENTORY, SessionConfig.defaults());
        yielding.yieldNow = () -> true;
        for (CorePair p : new CorePair[] {plain, yielding}) {
            for (int i = 0; i < 40; i++) {
                put(p, i); // a snapshot of several pages
            }
            p.connect();
            long last = 0;
            for (int i = 0; i < 60; i++) {
                last = put(p, i % 50); // many deltas of one read
            }
            p.requesterFlush(last);
            p.settle();
            p.advanceTo(p.now + 50_000_000L);
            assertEquals(last, p.receiver.appliedThrough.get());
        }
        assertTrue(plain.sent.size() > 10, "frames sent: " + plain.sent.size());
        assertEquals(plain.sent.size(), yielding.sent.size());
        for (int i = 0; i < plain.sent.size(); i++) {
            assertArrayEquals(plain.sent.get(i), yielding.sent.get(i), "frame " + i);
        }
    }
}
