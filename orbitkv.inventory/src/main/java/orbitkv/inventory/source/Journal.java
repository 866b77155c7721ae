package orbitkv.inventory.source;

import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.ResidenceRecord;

/**
 * The bounded journal of residency changes (DESIGN §4, BND-5, INV-9): a ring of immutable records whose
 * sequences are contiguous from {@link #oldestRetained()} to {@link #head()}. Appending never blocks: when
 * the byte or count bound would be exceeded, the oldest entries are trimmed first. Owned by
 * {@link SourceInventory} and only touched under its inventory lock (not thread-safe by itself).
 *
 * <p>Accounted bytes per entry: {@link InventoryConfig#JOURNAL_ENTRY_FIXED_BYTES} + key length + namespace
 * length ({@link #entryBytes}). The fixed part covers the ring slot, the record object and the StateKey
 * object with its key array header; it is measured by {@code JournalFootprintBenchmark}. The namespace
 * term over-counts a namespace object shared by many keys (the usual case: one per representation).
 */
final class Journal {
    private static final int INITIAL_CAPACITY = 1024;

    private final int recordsMax;
    private final long bytesMax;
    private ResidenceRecord[] ring;
    private int start;
    private int size;
    private long head;
    private long bytes;
    private long peakBytes;
    private long trimmed;

    Journal(int recordsMax, long bytesMax) {
        if (recordsMax < 1 || bytesMax < InventoryConfig.JOURNAL_ENTRY_BYTES_MAX) {
            throw new IllegalArgumentException("journal needs recordsMax >= 1 (got " + recordsMax
                    + ") and bytesMax >= JOURNAL_ENTRY_BYTES_MAX (got " + bytesMax + ")");
        }
        this.recordsMax = recordsMax;
        this.bytesMax = bytesMax;
        this.ring = new ResidenceRecord[Math.min(recordsMax, INITIAL_CAPACITY)];
    }

    /** Accounted journal bytes of one record (documented formula, see class comment). */
    static long entryBytes(ResidenceRecord r) {
        return InventoryConfig.JOURNAL_ENTRY_FIXED_BYTES + r.key().keyLength() + r.key().namespace().length();
    }

    /** The sequence the next append must carry. */
    long nextSequence() {
        return Math.addExact(head, 1);
    }

    /** Appends {@code r} (which must carry {@link #nextSequence()}), trimming the oldest entries first if needed. */
    void append(ResidenceRecord r) {
        if (r.sequence() != head + 1) {
            throw new IllegalStateException("journal append must carry sequence " + (head + 1) + ", got " + r.sequence());
        }
        long b = entryBytes(r);
        while (size > 0 && (size + 1 > recordsMax || bytes + b > bytesMax)) {
            trimOldest();
        }
        if (size == ring.length) {
            grow();
        }
        ring[(start + size) % ring.length] = r;
        size++;
        head = r.sequence();
        bytes += b;
        peakBytes = Math.max(peakBytes, bytes);
        assert contiguous() : "INV-4: journal not contiguous after append of " + r.sequence();
    }

    /**
     * INV-4, issue 34 item 8: within both bounds, the oldest entry is oldestRetained(), the newest is head and its
     * predecessor head - 1 (O(1): appends keep the rest contiguous by induction).
     */
    private boolean contiguous() {
        if (size < 1 || size > recordsMax || bytes < 0 || bytes > bytesMax) {
            return false;
        }
        long newest = ring[(start + size - 1) % ring.length].sequence();
        boolean previous = size < 2 || ring[(start + size - 2) % ring.length].sequence() == head - 1;
        return newest == head && previous && ring[start].sequence() == oldestRetained();
    }

    private void trimOldest() {
        ResidenceRecord r = ring[start];
        ring[start] = null;
        start = (start + 1) % ring.length;
        size--;
        bytes -= entryBytes(r);
        trimmed++;
        assert bytes >= 0 && size >= 0 : "journal accounting went negative: " + bytes + " bytes, " + size + " entries";
    }

    private void grow() {
        int capacity = (int) Math.min(recordsMax, 2L * ring.length);
        ResidenceRecord[] next = new ResidenceRecord[capacity];
        for (int i = 0; i < size; i++) {
            next[i] = ring[(start + i) % ring.length];
        }
        ring = next;
        start = 0;
    }

    long head() {
        return head;
    }

    /** The oldest retained sequence; {@code head + 1} when empty. */
    long oldestRetained() {
        return head + 1 - size;
    }

    int size() {
        return size;
    }

    long bytes() {
        return bytes;
    }

    long peakBytes() {
        return peakBytes;
    }

    long trimmed() {
        return trimmed;
    }

    /**
     * Copies the entries {@code fromExclusive + 1 .. min(throughInclusive, fromExclusive + max)} into a new
     * array. Requires {@code oldestRetained() - 1 <= fromExclusive < throughInclusive <= head()}.
     */
    ResidenceRecord[] copyAfter(long fromExclusive, long throughInclusive, int max) {
        long oldest = oldestRetained();
        if (fromExclusive < oldest - 1 || throughInclusive > head || fromExclusive >= throughInclusive) {
            throw new IllegalArgumentException("journal copy (" + fromExclusive + ", " + throughInclusive
                    + "] is not inside the retained (" + (oldest - 1) + ", " + head + "]");
        }
        int n = (int) Math.min(max, throughInclusive - fromExclusive);
        ResidenceRecord[] out = new ResidenceRecord[n];
        int first = (int) ((start + (fromExclusive + 1 - oldest)) % ring.length);
        int firstRun = Math.min(n, ring.length - first);
        System.arraycopy(ring, first, out, 0, firstRun);
        System.arraycopy(ring, 0, out, firstRun, n - firstRun);
        return out;
    }
}
