package orbitkv.server.transfer;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The requester's receive credits for peer routes (ROUTE-11, DESIGN "Receive credits"): a bounded in-flight byte
 * window ({@code --transfer-receive-in-flight-bytes-max}) that a route takes <em>before</em> its source is asked to
 * authorize and keeps until its READs physically drained, so a refusal names this Manager's window and never costs a
 * source a grant or a pin. A route takes the bytes it may have in flight at once; the engine's own per-READ window of
 * the same size therefore never refuses a READ of a credited route. Owner: {@link PeerTransfer}.
 */
public final class ReceiveCredits {
    private final long bytesMax;
    private long heldBytes;
    private final AtomicLong refusals = new AtomicLong();

    /** @param bytesMax the window; positive */
    public ReceiveCredits(long bytesMax) {
        if (bytesMax <= 0) {
            throw new IllegalArgumentException("bytesMax must be positive, got " + bytesMax);
        }
        this.bytesMax = bytesMax;
    }

    /** Takes {@code bytes} if they fit beside what is held; otherwise counts a refusal and takes nothing. */
    public synchronized boolean tryTake(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("bytes must be positive, got " + bytes);
        }
        if (bytes > bytesMax - heldBytes) {
            refusals.incrementAndGet();
            return false;
        }
        heldBytes += bytes;
        return true;
    }

    /** Returns {@code bytes} taken earlier; returning more than is held is a bookkeeping bug and throws. */
    public synchronized void release(long bytes) {
        if (bytes <= 0 || bytes > heldBytes) {
            throw new IllegalStateException("release of " + bytes + " bytes with " + heldBytes + " held");
        }
        heldBytes -= bytes;
    }

    public synchronized long heldBytes() {
        return heldBytes;
    }

    public long bytesMax() {
        return bytesMax;
    }

    /** Routes refused because the window could not take their bytes. */
    public long refusals() {
        return refusals.get();
    }
}
