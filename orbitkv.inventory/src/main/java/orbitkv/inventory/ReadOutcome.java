package orbitkv.inventory;

import java.util.List;
import java.util.Objects;

/**
 * Outcome of reading coalesced journal intervals from a cursor (PUB-1, DELTA-3, DELTA-10, BND-5).
 */
public sealed interface ReadOutcome
        permits ReadOutcome.Intervals, ReadOutcome.Trimmed, ReadOutcome.BeyondHead, ReadOutcome.RecordTooLarge {

    /**
     * Contiguous coalesced intervals starting at the requested cursor; each covers its whole input
     * interval (INV-4). Empty when the cursor already is at the requested end.
     */
    record Intervals(List<CoalescedInterval> intervals) implements ReadOutcome {
        public Intervals {
            intervals = List.copyOf(Objects.requireNonNull(intervals, "intervals must not be null"));
            for (int i = 1; i < intervals.size(); i++) {
                if (!intervals.get(i - 1).interval().isFollowedBy(intervals.get(i).interval())) {
                    throw new IllegalArgumentException("intervals must be contiguous; " + intervals.get(i - 1).interval()
                            + " is not followed by " + intervals.get(i).interval());
                }
            }
        }

        /** The cursor after applying every interval, or {@code from} when there is none. */
        public long endCursor(long from) {
            return intervals.isEmpty() ? from : intervals.getLast().interval().to();
        }
    }

    /**
     * The history after {@code fromExclusive} is no longer retained (BND-5): nothing partial is returned,
     * the reader must bootstrap (DELTA-10, SNAP-4).
     */
    record Trimmed(long fromExclusive, long oldestRetainedSequence) implements ReadOutcome {}

    /** The cursor is after the source head: it cannot come from this incarnation's journal. */
    record BeyondHead(long fromExclusive, long headSequence) implements ReadOutcome {}

    /**
     * One indivisible record does not fit a frame even alone (DELTA-3): an explicit error, nothing
     * is skipped. The reader cannot advance past {@code sequence}.
     *
     * @param sequence the record's residency sequence
     * @param bound which frame bound it exceeds
     * @param bytes its size in that bound's measure
     * @param boundBytes the configured bound
     */
    record RecordTooLarge(long sequence, FrameBound bound, long bytes, long boundBytes) implements ReadOutcome {}

    /** The frame bounds of {@link InventoryConfig}. */
    enum FrameBound {
        FRAME_ENCODED_BYTES_MAX,
        FRAME_DECODED_BYTES_MAX
    }
}
