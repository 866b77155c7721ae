package orbitkv.inventory;

import java.util.List;
import java.util.Objects;

/**
 * The coalesced output of one contiguous input interval {@code (from, to]} of the source journal
 * (PUB-1, DELTA-1, DELTA-3, INV-4): for each {@code (StateKey, medium)} changed in the interval and in
 * the reader's scope, its last record, with its own sequence (DELTA-6). It covers the whole interval
 * even with fewer records than positions (filtered or coalesced positions), including none.
 *
 * @param interval the covered input interval, never empty
 * @param records strictly increasing by {@code (StateKey, medium)}; every sequence inside the interval
 */
public record CoalescedInterval(Interval interval, List<ResidenceRecord> records) {
    public CoalescedInterval {
        Objects.requireNonNull(interval, "coalesced interval must not be null");
        Objects.requireNonNull(records, "coalesced records must not be null");
        records = List.copyOf(records);
        if (interval.isEmpty()) {
            throw new IllegalArgumentException("a coalesced interval covers at least one position, got " + interval);
        }
        for (int i = 0; i < records.size(); i++) {
            ResidenceRecord r = records.get(i);
            if (!interval.contains(r.sequence())) {
                throw new IllegalArgumentException("record " + i + " sequence " + r.sequence() + " is outside " + interval);
            }
            if (i > 0 && ResidenceOrder.compare(records.get(i - 1), r) >= 0) {
                throw new IllegalArgumentException("records must be strictly increasing by (StateKey, medium); index " + i + " is not");
            }
        }
    }
}
