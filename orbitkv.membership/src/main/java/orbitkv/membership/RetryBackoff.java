package orbitkv.membership;

import java.util.concurrent.ThreadLocalRandom;

/**
 * The one retry pacing of the project: capped exponential backoff, optionally with "equal jitter" (each
 * delay drawn uniformly from its upper half, so peers that failed together do not retry together). Used by
 * membership's registration, lease renewal and watch retries, and by the InventorySession's reconnects and
 * snapshot retries (SNAP-4, SNAP-13): it lives in membership's contract package because both modules
 * need it and inventory already requires membership.
 *
 * @param minMs the first delay, at least 1
 * @param maxMs the cap, at least {@code minMs}
 * @param jitter whether delays are jittered
 */
public record RetryBackoff(long minMs, long maxMs, Jitter jitter) {
    /** How a delay is drawn from the exponential schedule. */
    public enum Jitter {
        /** Exactly the schedule: min, 2·min, 4·min, ... capped at max. */
        NONE,
        /** Uniformly in [d/2, d] for the schedule's delay d. */
        EQUAL
    }

    public RetryBackoff {
        if (minMs < 1 || maxMs < minMs) {
            throw new IllegalArgumentException("backoff minMs (" + minMs + ") must be >= 1 and <= maxMs (" + maxMs + ")");
        }
        if (jitter == null) {
            throw new IllegalArgumentException("backoff jitter must not be null");
        }
    }

    /** The schedule's delay before retry {@code attempt} (0-based): min·2^attempt, capped at max, no jitter. */
    public long scheduledDelayMs(int attempt) {
        if (attempt < 0) {
            throw new IllegalArgumentException("attempt must be >= 0, got " + attempt);
        }
        long d = minMs;
        for (int i = 0; i < attempt && d < maxMs; i++) {
            d = d > maxMs / 2 ? maxMs : d * 2; // never overflows
        }
        return d;
    }

    /** A new retry loop's cursor (not thread-safe: one per loop). */
    public Sequence sequence() {
        return new Sequence(this);
    }

    /** The position of one retry loop in the schedule. */
    public static final class Sequence {
        private final RetryBackoff backoff;
        private int attempt;

        private Sequence(RetryBackoff backoff) {
            this.backoff = backoff;
        }

        /** The delay before the next retry; each call moves one step up the schedule. */
        public long nextDelayMs() {
            long d = backoff.scheduledDelayMs(attempt);
            if (d < backoff.maxMs) {
                attempt++;
            }
            return backoff.jitter == Jitter.EQUAL ? d / 2 + ThreadLocalRandom.current().nextLong(d / 2 + 1) : d;
        }

        /** Back to the first delay (after progress). */
        public void reset() {
            attempt = 0;
        }
    }
}
