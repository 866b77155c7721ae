package orbitkv.conformance.inventory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import orbitkv.inventory.CoalescedInterval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StateKey;

/**
 * An independent oracle of the source inventory, written from the design alone (DESIGN §4): the full
 * history of residency records (sequence i is history[i-1]), the resident map at any sequence, journal
 * retention by the documented entry formula (96 + key + namespace bytes; the longest suffix of history
 * within both bounds), and a receiver view that applies deltas and pages. It never calls the code under
 * test.
 */
final class ResidenceModel {
    /** Documented accounted bytes of a journal entry besides key and namespace. */
    static final int ENTRY_FIXED_BYTES = 96;

    record Residence(StateKey key, Medium medium) {}

    final List<ResidenceRecord> history = new ArrayList<>();
    private final Map<Residence, ResidenceRecord> current = new HashMap<>();

    long head() {
        return history.size();
    }

    /** The record a put produces, appended. */
    ResidenceRecord put(StateKey key, Medium medium, long size) {
        ResidenceRecord r = ResidenceRecord.put(key, medium, head() + 1, size);
        history.add(r);
        current.put(new Residence(key, medium), r);
        return r;
    }

    /** The record a delete produces, or null when the residence is not resident (no sequence used). */
    ResidenceRecord delete(StateKey key, Medium medium) {
        if (current.remove(new Residence(key, medium)) == null) {
            return null;
        }
        ResidenceRecord r = ResidenceRecord.delete(key, medium, head() + 1);
        history.add(r);
        return r;
    }

    ResidenceRecord current(StateKey key, Medium medium) {
        return current.get(new Residence(key, medium));
    }

    /** The resident map after applying sequences 1..seq, restricted to scope. */
    Map<Residence, ResidenceRecord> mapAt(long seq, Scope scope) {
        Map<Residence, ResidenceRecord> m = new HashMap<>();
        for (int i = 0; i < seq; i++) {
            ResidenceRecord r = history.get(i);
            Residence k = new Residence(r.key(), r.medium());
            if (r.isDelete()) {
                m.remove(k);
            } else {
                m.put(k, r);
            }
        }
        m.keySet().removeIf(k -> !scope.contains(k.key().namespace()));
        return m;
    }

    static long entryBytes(ResidenceRecord r) {
        return ENTRY_FIXED_BYTES + r.key().keyLength() + r.key().namespace().length();
    }

    /** Oldest retained sequence: the longest suffix of history within both bounds. */
    long oldestRetained(int recordsMax, long bytesMax) {
        long bytes = 0;
        int count = 0;
        for (int i = history.size() - 1; i >= 0; i--) {
            long b = entryBytes(history.get(i));
            if (count + 1 > recordsMax || bytes + b > bytesMax) {
                break;
            }
            bytes += b;
            count++;
        }
        return head() + 1 - count;
    }

    /** A receiver's view: rows by residence. */
    static final class View {
        final Map<Residence, ResidenceRecord> rows;

        View(Map<Residence, ResidenceRecord> rows) {
            this.rows = new HashMap<>(rows);
        }

        /** Incremental application of a delta (DELTA-1): records replace rows; deletes remove them. */
        void apply(CoalescedInterval ci) {
            for (ResidenceRecord r : ci.records()) {
                Residence k = new Residence(r.key(), r.medium());
                if (r.isDelete()) {
                    rows.remove(k);
                } else {
                    rows.put(k, r);
                }
            }
        }

        /** Replay by version (SNAP-3): an older record never overwrites a newer scanned row. */
        void applyByVersion(CoalescedInterval ci) {
            for (ResidenceRecord r : ci.records()) {
                Residence k = new Residence(r.key(), r.medium());
                ResidenceRecord existing = rows.get(k);
                if (existing != null && existing.sequence() > r.sequence()) {
                    continue;
                }
                if (r.isDelete()) {
                    rows.remove(k);
                } else {
                    rows.put(k, r);
                }
            }
        }
    }
}
