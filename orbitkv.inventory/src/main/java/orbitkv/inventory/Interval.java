package orbitkv.inventory;

/**
 * A half-open interval {@code (from, to]} of source journal sequences (DESIGN §5, DELTA-1). Empty when
 * {@code from == to}. Sequences are non-negative 64-bit values; every operation that could overflow
 * refuses instead of wrapping (SES-9).
 *
 * @param from exclusive lower bound, {@code >= 0}
 * @param to inclusive upper bound, {@code >= from}
 */
public record Interval(long from, long to) {
    public Interval {
        if (from < 0) {
            throw new IllegalArgumentException("interval from must be >= 0, got " + from);
        }
        if (to < from) {
            throw new IllegalArgumentException("interval to (" + to + ") must be >= from (" + from + ")");
        }
    }

    public static Interval of(long from, long to) {
        return new Interval(from, to);
    }

    /** Number of sequence positions covered; never overflows because {@code 0 <= from <= to}. */
    public long length() {
        return to - from;
    }

    public boolean isEmpty() {
        return from == to;
    }

    /** True iff {@code from < sequence <= to}. */
    public boolean contains(long sequence) {
        return sequence > from && sequence <= to;
    }

    /** True iff {@code next} starts exactly where this one ends (contiguous coverage, INV-4). */
    public boolean isFollowedBy(Interval next) {
        return next.from == to;
    }

    /** {@code (from, to + n]}; throws {@link ArithmeticException} on overflow. */
    public Interval extendBy(long n) {
        if (n < 0) {
            throw new IllegalArgumentException("interval extension must be >= 0, got " + n);
        }
        return new Interval(from, Math.addExact(to, n));
    }

    @Override
    public String toString() {
        return "(" + from + ", " + to + "]";
    }
}
