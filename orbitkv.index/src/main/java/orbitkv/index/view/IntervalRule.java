package orbitkv.index.view;

import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.Interval;

/**
 * The receiver's interval rules for a delta {@code (from, to]} at watermark {@code a}
 * (DELTA-7, DELTA-8, DELTA-9). Pure: the caller applies the frame only when this returns null.
 */
final class IntervalRule {
    private IntervalRule() {
    }

    /**
     * @return {@code Duplicate} if {@code to <= a}, {@code ResumeFrom(a)} if {@code from < a < to},
     *     {@code NeedRepair(a)} if {@code from > a}, or null if {@code from == a} (apply)
     */
    static DeltaOutcome classify(long a, Interval frame) {
        if (frame.to() <= a) {
            return new DeltaOutcome.Duplicate(a);
        }
        if (frame.from() < a) {
            return new DeltaOutcome.ResumeFrom(a);
        }
        if (frame.from() > a) {
            return new DeltaOutcome.NeedRepair(a);
        }
        return null;
    }
}
