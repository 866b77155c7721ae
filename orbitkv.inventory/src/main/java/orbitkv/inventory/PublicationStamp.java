package orbitkv.inventory;

/**
 * The latest publication of this source: its residency sequence and the {@code System.nanoTime()} taken
 * after the resident-map change and journal append, under the inventory lock. This is the publication
 * endpoint of measurement contract s2.10-performance-v2 (PERF-1); only the latest one is retained
 * (a bounded status field). {@link #NONE} before the first mutation.
 *
 * @param sequence the residency sequence, {@code >= 0} (0 only for {@link #NONE})
 * @param monoNanos {@code System.nanoTime()} of the same host; comparable only on that host
 */
public record PublicationStamp(long sequence, long monoNanos) {
    /** No mutation yet in this incarnation. */
    public static final PublicationStamp NONE = new PublicationStamp(0, 0);

    public PublicationStamp {
        if (sequence < 0) {
            throw new IllegalArgumentException("publication sequence must be >= 0, got " + sequence);
        }
    }
}
