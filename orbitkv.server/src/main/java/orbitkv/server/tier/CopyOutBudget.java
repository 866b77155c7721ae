package orbitkv.server.tier;

import java.util.concurrent.atomic.LongAdder;

/**
 * Bytes copied out of the tiers into restore responses that are not written yet, across all requests
 * (issue 20 item 4: memory has a bound that holds). Restore responses live in direct memory; without this
 * bound {@code --http-requests-in-flight-max} restores of {@code --save-body-bytes-max} each could ask for
 * far more than the JVM's direct-memory limit. A restore takes each record's bytes before copying it; when
 * the budget cannot cover the next record, the prefix stops there ({@code stop=response-memory}, counted),
 * never waits. Thread-safe.
 */
public final class CopyOutBudget {
    private final long bytesMax;
    private final LongAdder refusals = new LongAdder();
    private long held;

    /** @param bytesMax the bound, at least 1 */
    public CopyOutBudget(long bytesMax) {
        if (bytesMax < 1) {
            throw new IllegalArgumentException("copy-out budget must be >= 1 byte, got " + bytesMax);
        }
        this.bytesMax = bytesMax;
    }

    /** Takes {@code bytes} if they fit; false (counted) otherwise. */
    public synchronized boolean tryTake(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes must be >= 0, got " + bytes);
        }
        if (held + bytes > bytesMax) {
            refusals.increment();
            return false;
        }
        held += bytes;
        return true;
    }

    /** Gives back bytes taken earlier (when the response holding them is freed). */
    public synchronized void release(long bytes) {
        if (bytes < 0 || bytes > held) {
            throw new IllegalStateException("release of " + bytes + " bytes exceeds the " + held + " held");
        }
        held -= bytes;
    }

    public synchronized long heldBytes() {
        return held;
    }

    public long bytesMax() {
        return bytesMax;
    }

    /** Restores stopped because the budget could not cover their next record. */
    public long refusalsTotal() {
        return refusals.sum();
    }
}
