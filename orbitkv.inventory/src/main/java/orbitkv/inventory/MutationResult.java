package orbitkv.inventory;

/**
 * Outcome of one residency mutation on an {@link InventorySource} (DESIGN §4, INV-3).
 */
public sealed interface MutationResult permits MutationResult.Recorded, MutationResult.NotResident {
    /**
     * The mutation took the next residency sequence; the resident map and journal changed together.
     *
     * @param record the journal record, carrying its residency sequence
     * @param publishedMonoNanos {@code System.nanoTime()} after the mutation, under the inventory lock (PERF-1)
     */
    record Recorded(ResidenceRecord record, long publishedMonoNanos) implements MutationResult {
        public Recorded {
            java.util.Objects.requireNonNull(record, "recorded record must not be null");
        }

        public long sequence() {
            return record.sequence();
        }
    }

    /**
     * A delete of a {@code (StateKey, medium)} that is not resident: nothing changed and no sequence was
     * consumed, so sequences stay contiguous over real residency changes only.
     */
    record NotResident(StateKey key, Medium medium) implements MutationResult {
        public NotResident {
            java.util.Objects.requireNonNull(key, "key must not be null");
            java.util.Objects.requireNonNull(medium, "medium must not be null");
        }
    }
}
