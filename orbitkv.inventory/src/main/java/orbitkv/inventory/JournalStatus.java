package orbitkv.inventory;

/**
 * A consistent view of the journal taken under the inventory lock (DIAG-1, BND-5).
 *
 * @param headSequence the last assigned residency sequence, 0 before the first mutation
 * @param oldestRetainedSequence the oldest sequence still in the journal; {@code headSequence + 1} when empty.
 *     A read from cursor {@code a} succeeds iff {@code a >= oldestRetainedSequence - 1}.
 * @param retainedRecords entries currently retained
 * @param journalBytes accounted bytes currently retained
 * @param journalPeakBytes highest accounted bytes ever retained by this incarnation
 * @param trimmedRecords entries trimmed so far by the byte or count bound
 * @param lastPublication the latest publication stamp (PERF-1)
 */
public record JournalStatus(long headSequence, long oldestRetainedSequence, long retainedRecords, long journalBytes,
        long journalPeakBytes, long trimmedRecords, PublicationStamp lastPublication) {
    public JournalStatus {
        if (headSequence < 0 || oldestRetainedSequence < 1 || oldestRetainedSequence > headSequence + 1) {
            throw new IllegalArgumentException("journal status needs 1 <= oldestRetainedSequence (" + oldestRetainedSequence
                    + ") <= headSequence + 1 (" + (headSequence + 1) + ")");
        }
        if (retainedRecords != headSequence + 1 - oldestRetainedSequence) {
            throw new IllegalArgumentException("retainedRecords (" + retainedRecords + ") must equal headSequence + 1 - oldestRetainedSequence");
        }
        if (journalBytes < 0 || journalPeakBytes < journalBytes) {
            throw new IllegalArgumentException("journalPeakBytes (" + journalPeakBytes + ") must be >= journalBytes (" + journalBytes + ") >= 0");
        }
        java.util.Objects.requireNonNull(lastPublication, "last publication must not be null");
    }

    /** The smallest cursor a read can start from without being trimmed. */
    public long lowestReadableCursor() {
        return oldestRetainedSequence - 1;
    }
}
