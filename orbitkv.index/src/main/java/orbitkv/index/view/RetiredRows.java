package orbitkv.index.view;

import orbitkv.membership.Incarnation;

/**
 * The rows of a removed owner, no longer reachable by lookups, freed in bounded batches (IDX-1). The
 * owner's partition table is its reverse owner index: it lists exactly the rows to free. Guarded by the
 * index's cleanup queue lock.
 */
final class RetiredRows {
    final Incarnation owner;
    private final ResidenceTable table;
    private long bytesCharged;
    private int nextSlot;

    RetiredRows(Incarnation owner, ResidenceTable table, long bytesCharged) {
        this.owner = owner;
        this.table = table;
        this.bytesCharged = bytesCharged;
    }

    long rowsRemaining() {
        return table.size();
    }

    /**
     * Frees up to {@code maxRows} rows.
     *
     * @return {@code [rowsFreed, bytesFreed]}; all bytes are returned with the last batch
     */
    long[] freeBatch(int maxRows) {
        long[] r = table.clearBatch(nextSlot, maxRows);
        nextSlot = (int) r[0];
        long bytes = r[2];
        if (table.size() == 0) {
            bytes = bytesCharged;
        }
        bytesCharged -= bytes;
        return new long[] {r[1], bytes};
    }
}
