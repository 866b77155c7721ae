package orbitkv.server.tier;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;

/** Records every residency change in order and assigns contiguous sequences (the tests' journal oracle). */
final class RecordingListener implements ResidencyListener {
    record Event(String op, StateKey key, Medium medium, long sequence, long size) {}

    final List<Event> events = new ArrayList<>();
    /** Resident map as the listener saw it: (key, medium) → sequence. */
    final Map<String, Long> resident = new LinkedHashMap<>();
    private long head;

    @Override
    public synchronized long onResident(StateKey key, Medium medium, long sizeBytes) {
        head++;
        events.add(new Event("put", key, medium, head, sizeBytes));
        resident.put(medium + ":" + key, head);
        return head;
    }

    @Override
    public synchronized long onEvicted(StateKey key, Medium medium) {
        head++;
        events.add(new Event("delete", key, medium, head, 0));
        if (resident.remove(medium + ":" + key) == null) {
            throw new AssertionError("delete of a residence that was never put: " + medium + ":" + key);
        }
        return head;
    }

    @Override
    public synchronized long headSequence() {
        return head;
    }

    synchronized List<String> deletes() {
        return events.stream().filter(e -> e.op.equals("delete")).map(e -> e.medium + ":" + e.key.keyHex()).toList();
    }
}
