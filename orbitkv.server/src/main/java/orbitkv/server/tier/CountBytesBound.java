package orbitkv.server.tier;

/**
 * A bound on a count and a byte total held together (INV-9), for example the SSD write queue. Thread-safe.
 * {@link #tryAdd} refuses (returns false) instead of exceeding either side; releasing more than was added
 * is a programming error and throws. The bytes are a {@link ByteBudget}; the count is kept beside it under the
 * same lock (the budget's lock is always taken inside this one).
 */
final class CountBytesBound {
    private final String name;
    private final int countMax;
    private final ByteBudget bytes;
    private int count;

    CountBytesBound(String name, int countMax, long bytesMax) {
        if (countMax < 1 || bytesMax < 1) {
            throw new IllegalArgumentException(name + " bound must be >= 1 entry and >= 1 byte, got "
                    + countMax + " entries, " + bytesMax + " bytes");
        }
        this.name = name;
        this.countMax = countMax;
        this.bytes = new ByteBudget(name, bytesMax);
    }

    synchronized boolean tryAdd(long entryBytes) {
        if (entryBytes < 0) {
            throw new IllegalArgumentException(name + ": entry bytes must be >= 0, got " + entryBytes);
        }
        if (count + 1 > countMax || !bytes.tryTake(entryBytes)) {
            return false;
        }
        count++;
        assert count <= countMax : name + " holds " + count + " entries of " + countMax;
        return true;
    }

    synchronized void release(long entryBytes) {
        if (count < 1 || entryBytes > bytes.heldBytes() || entryBytes < 0) {
            throw new IllegalStateException(name + ": release of " + entryBytes + " bytes exceeds held "
                    + count + " entries, " + bytes.heldBytes() + " bytes");
        }
        count--;
        bytes.release(entryBytes);
        assert count >= 0 : name + " holds " + count + " entries";
    }

    synchronized int count() {
        return count;
    }

    synchronized long bytes() {
        return bytes.heldBytes();
    }

    int countMax() {
        return countMax;
    }

    long bytesMax() {
        return bytes.bytesMax();
    }
}
