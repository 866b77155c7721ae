package orbitkv.index.view;

/**
 * The one byte budget of rows, reverse owner index and staging (SNAP-12, INV-9). {@link #tryReserve}
 * refuses instead of exceeding; releasing more than was reserved is a bug and throws.
 */
final class IndexBudget {
    private final long bytesMax;
    private long bytesUsed;

    IndexBudget(long bytesMax) {
        if (bytesMax <= 0) {
            throw new IllegalArgumentException("index budget bytesMax must be > 0, got " + bytesMax);
        }
        this.bytesMax = bytesMax;
    }

    synchronized boolean tryReserve(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("budget reservation must be >= 0 bytes, got " + bytes);
        }
        if (bytes > bytesMax - bytesUsed) {
            return false;
        }
        bytesUsed += bytes;
        return true;
    }

    synchronized void release(long bytes) {
        if (bytes < 0 || bytes > bytesUsed) {
            throw new IllegalStateException("budget release of " + bytes + " bytes with only " + bytesUsed + " reserved");
        }
        bytesUsed -= bytes;
    }

    synchronized long bytesUsed() {
        return bytesUsed;
    }

    long bytesMax() {
        return bytesMax;
    }
}
