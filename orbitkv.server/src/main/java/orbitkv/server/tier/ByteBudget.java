package orbitkv.server.tier;

import java.util.concurrent.atomic.LongAdder;

/**
 * The one byte budget of the Manager (INV-9, BND-1; issue 34 item 8): a named bound on bytes held at once, taken
 * before the memory or the work they stand for is committed and given back exactly once. A take that does not fit
 * is refused and counted, never waited for; giving back more than is held is a bookkeeping bug and throws. The
 * server's budgets are all this class: restore copy-out ({@link CopyOutBudget}), receive credits
 * ({@code orbitkv.server.transfer.ReceiveCredits}), the bytes side of {@link CountBytesBound} (SSD write queue, pin
 * ledgers) and the whole of the HTTP body bytes in flight. Thread-safe; tiny critical sections.
 */
public class ByteBudget {
    private final String name;
    private final long bytesMax;
    private final LongAdder refusals = new LongAdder();
    private long held;
    private long peak;

    /**
     * @param name what the bytes are, for messages (for example "restore copy-out")
     * @param bytesMax the bound, at least 1
     */
    public ByteBudget(String name, long bytesMax) {
        if (bytesMax < 1) {
            throw new IllegalArgumentException(name + " budget must be >= 1 byte, got " + bytesMax);
        }
        this.name = name;
        this.bytesMax = bytesMax;
    }

    /** Takes {@code bytes} if they fit beside what is held; otherwise counts a refusal and takes nothing. */
    public synchronized boolean tryTake(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException(name + ": bytes must be >= 0, got " + bytes);
        }
        if (bytes > bytesMax - held) {
            refusals.increment();
            return false;
        }
        held += bytes;
        peak = Math.max(peak, held);
        assert held >= 0 && held <= bytesMax : name + " holds " + held + " of " + bytesMax;
        return true;
    }

    /** Gives back {@code bytes} taken earlier. */
    public synchronized void release(long bytes) {
        if (bytes < 0 || bytes > held) {
            throw new IllegalStateException(name + ": release of " + bytes + " bytes with " + held + " held");
        }
        held -= bytes;
        assert held >= 0 : name + " holds " + held;
    }

    public synchronized long heldBytes() {
        return held;
    }

    /** The high-water mark of {@link #heldBytes()}. */
    public synchronized long peakBytes() {
        return peak;
    }

    public long bytesMax() {
        return bytesMax;
    }

    /** Takes refused because the bytes did not fit. */
    public long refusals() {
        return refusals.sum();
    }

    public String name() {
        return name;
    }
}
