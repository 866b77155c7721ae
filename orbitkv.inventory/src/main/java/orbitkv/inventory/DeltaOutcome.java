package orbitkv.inventory;

import java.util.Objects;

/**
 * What a {@link ViewReceiver} did with a delta {@code (from, to]} at watermark {@code a}
 * (DELTA-7..DELTA-9, DELTA-2). The watermark is the receiver's cursor, never a record sequence (DELTA-6).
 */
public sealed interface DeltaOutcome {
    /** {@code from == a}: validated, accounted, records and cursor applied atomically; cursor is now {@code watermark}. */
    record Applied(long watermark) implements DeltaOutcome {
        public Applied {
            requireCursor(watermark);
        }
    }

    /** {@code to <= a}: already applied; discarded, nothing changed (DELTA-7). */
    record Duplicate(long watermark) implements DeltaOutcome {
        public Duplicate {
            requireCursor(watermark);
        }
    }

    /** {@code from < a < to}: nothing applied; the sender must regenerate from {@code appliedCursor} (DELTA-8). */
    record ResumeFrom(long appliedCursor) implements DeltaOutcome {
        public ResumeFrom {
            requireCursor(appliedCursor);
        }
    }

    /** {@code from > a}: a gap; nothing applied, the cursor does not advance (DELTA-9). */
    record NeedRepair(long appliedCursor) implements DeltaOutcome {
        public NeedRepair {
            requireCursor(appliedCursor);
        }
    }

    /** Refused; the view is untouched (DELTA-5). */
    record Rejected(RejectReason reason) implements DeltaOutcome {
        public Rejected {
            Objects.requireNonNull(reason, "reject reason must not be null");
        }
    }

    private static void requireCursor(long cursor) {
        if (cursor < 0) {
            throw new IllegalArgumentException("cursor must be >= 0, got " + cursor);
        }
    }
}
