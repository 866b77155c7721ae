package orbitkv.conformance.session;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StateKey;

/**
 * The oracle: an independent model of one source incarnation's journal. Every mutation the test applies
 * to the source is appended here with the sequence the source returned; the resident map at any
 * watermark is the replay of the first {@code w} mutations. Unbounded on purpose (test-owned, small).
 */
final class JournalModel {
    record Residence(StateKey key, Medium medium) {}

    record Generation(long sequence, long sizeBytes) {}

    private record Mutation(Residence residence, boolean delete, long sizeBytes) {}

    private final List<Mutation> mutations = new ArrayList<>();

    synchronized void put(StateKey key, Medium medium, long size, long sequence) {
        append(new Mutation(new Residence(key, medium), false, size), sequence);
    }

    synchronized void delete(StateKey key, Medium medium, long sequence) {
        append(new Mutation(new Residence(key, medium), true, 0), sequence);
    }

    private void append(Mutation m, long sequence) {
        if (sequence != mutations.size() + 1) {
            throw new AssertionError("source assigned sequence " + sequence + " but the model expected "
                    + (mutations.size() + 1) + " (sequences must be contiguous from 1)");
        }
        mutations.add(m);
    }

    synchronized long head() {
        return mutations.size();
    }

    /** The resident map after the first {@code watermark} mutations, filtered by {@code scope}. */
    synchronized Map<Residence, Generation> stateAt(long watermark, Scope scope) {
        Objects.checkIndex(Math.max(0, watermark - 1), Math.max(1, mutations.size() + 1));
        Map<Residence, Generation> state = new HashMap<>();
        for (int i = 0; i < watermark; i++) {
            Mutation m = mutations.get(i);
            if (!scope.contains(m.residence().key().namespace())) {
                continue;
            }
            if (m.delete()) {
                state.remove(m.residence());
            } else {
                state.put(m.residence(), new Generation(i + 1, m.sizeBytes()));
            }
        }
        return state;
    }
}
