package orbitkv.index.view;

/**
 * The one byte budget of rows, reverse owner index and staging (SNAP-12, INV-9). {@link #tryReserve}
 * refuses instead of exceeding; releasing more than was reserved is a bug and throws.
 */
final class IndexBudget {
    private final long bytesMax;
    private long bytesUsed;
    private long bytesPeak;

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
        bytesPeak = Math.max(bytesPeak, bytesUsed);
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

    /** The high-water mark of {@link #bytesUsed()} since creation (DIAG-3 queue high-water). */
    synchronized long bytesPeak() {
        return bytesPeak;
    }

    long bytesMax() {
        return bytesMax;
    }
}
