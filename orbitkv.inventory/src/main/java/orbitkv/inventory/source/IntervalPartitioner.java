package orbitkv.inventory.source;

import java.util.ArrayList;
import java.util.List;
import orbitkv.inventory.CoalescedInterval;
import orbitkv.inventory.Interval;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.ReadOutcome;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.codec.FrameCodec;
import orbitkv.inventory.codec.SourceFrameEncoder;

/**
 * Cuts journal history into contiguous input intervals and coalesces each (PUB-1, DELTA-3, INV-4):
 * an input interval holds at most {@code inputRecordsMax} positions and {@code inputBytesMax} accounted
 * bytes (always at least one position); its coalesced output is measured as the real v4 frame (the exact
 * encoded size {@link SourceFrameEncoder} will write, computed without encoding) outside the inventory
 * lock, and if that frame exceeds {@code frameEncodedBytesMax} or its records exceed
 * {@code frameDecodedBytesMax}, the <em>input</em> interval is shortened and coalesced again. One
 * coalesced interval's keys are never split over several outputs. A single position that still does not
 * fit is {@link ReadOutcome.RecordTooLarge}. Adjacent intervals whose scoped output is empty are merged
 * into one coverage-only interval (DELTA-11): they prove the same emptiness with fewer frames. One read
 * cuts at most {@link #INPUT_INTERVALS_PER_OUTPUT} × {@code intervalsMax} input intervals, so a sparse
 * scope over a long history is bounded work per call; the reader continues from the returned end.
 */
final class IntervalPartitioner {
    /** Copies journal entries under the inventory lock, or reports the oldest retained sequence. */
    interface JournalCopier {
        /** Entries after {@code fromExclusive} (at most {@code max}, not beyond {@code through}), or null if trimmed. */
        ResidenceRecord[] copyAfter(long fromExclusive, long through, int max);

        long oldestRetained();
    }

    /** Input intervals a read may cut per requested output interval (bounds merged empty coverage). */
    static final int INPUT_INTERVALS_PER_OUTPUT = 64;

    private final InventoryConfig config;
    private final JournalCopier journal;

    IntervalPartitioner(InventoryConfig config, JournalCopier journal) {
        this.config = config;
        this.journal = journal;
    }

    ReadOutcome read(long fromExclusive, long through, Scope scope, int intervalsMax) {
        List<CoalescedInterval> out = new ArrayList<>();
        long cursor = fromExclusive;
        long cutsLeft = (long) INPUT_INTERVALS_PER_OUTPUT * intervalsMax;
        // At intervalsMax outputs, keep cutting only while the last output is empty coverage that can grow.
        while (cursor < through && cutsLeft-- > 0 && (out.size() < intervalsMax || out.getLast().records().isEmpty())) {
            ResidenceRecord[] input = journal.copyAfter(cursor, through, config.inputRecordsMax());
            if (input == null) {
                return out.isEmpty() ? new ReadOutcome.Trimmed(cursor, journal.oldestRetained()) : new ReadOutcome.Intervals(out);
            }
            switch (cut(cursor, input, inputPrefixByBytes(input), scope)) {
                case Cut.TooLarge(ReadOutcome.RecordTooLarge tooLarge) -> {
                    return out.isEmpty() ? tooLarge : new ReadOutcome.Intervals(out);
                }
                case Cut.Fits(CoalescedInterval next) -> {
                    if (out.size() == intervalsMax && !next.records().isEmpty()) {
                        return new ReadOutcome.Intervals(out); // no room; the next read cuts it again
                    }
                    appendMergingEmpty(out, next);
                    cursor = next.interval().to();
                }
            }
        }
        return new ReadOutcome.Intervals(out);
    }

    /** How many leading positions fit {@code inputBytesMax} (at least one). */
    private int inputPrefixByBytes(ResidenceRecord[] input) {
        long bytes = 0;
        for (int i = 0; i < input.length; i++) {
            bytes += Journal.entryBytes(input[i]);
            if (bytes > config.inputBytesMax()) {
                return Math.max(1, i);
            }
        }
        return input.length;
    }

    /** The result of cutting one input interval. */
    private sealed interface Cut {
        record Fits(CoalescedInterval interval) implements Cut {}

        record TooLarge(ReadOutcome.RecordTooLarge outcome) implements Cut {}
    }

    /** Coalesces {@code input[0 .. length)}, shortening the input until the frame fits (DELTA-3). */
    private Cut cut(long cursor, ResidenceRecord[] input, int length, Scope scope) {
        while (true) {
            List<ResidenceRecord> records = Coalescer.coalesce(input, length, scope);
            Interval interval = new Interval(cursor, cursor + length);
            long decoded = FrameCodec.decodedBytes(records);
            long over;
            long bound;
            ReadOutcome.FrameBound which;
            if (decoded > config.frameDecodedBytesMax()) {
                over = decoded;
                bound = config.frameDecodedBytesMax();
                which = ReadOutcome.FrameBound.FRAME_DECODED_BYTES_MAX;
            } else {
                over = SourceFrameEncoder.deltaFrameEncodedBytes(interval, records);
                bound = config.frameEncodedBytesMax();
                which = ReadOutcome.FrameBound.FRAME_ENCODED_BYTES_MAX;
                if (over <= bound) {
                    return new Cut.Fits(new CoalescedInterval(interval, records));
                }
            }
            if (length == 1) {
                return new Cut.TooLarge(new ReadOutcome.RecordTooLarge(input[0].sequence(), which, over, bound));
            }
            // Proportional guess, strictly shorter: coalescing may not shrink in proportion, so loop.
            length = (int) Math.max(1, Math.min(length - 1, (long) length * bound / over));
        }
    }

    private static void appendMergingEmpty(List<CoalescedInterval> out, CoalescedInterval next) {
        if (!out.isEmpty() && next.records().isEmpty() && out.getLast().records().isEmpty()) {
            Interval merged = new Interval(out.getLast().interval().from(), next.interval().to());
            out.set(out.size() - 1, new CoalescedInterval(merged, List.of()));
        } else {
            out.add(next);
        }
    }
}
