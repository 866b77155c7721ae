package orbitkv.transfer.frame;

/**
 * A bound on a count and a byte total held at once (INV-9): pins, egress, receive credits. {@link #tryAdd}
 * takes both or neither; {@link #release} returns exactly what was taken and throws on a release of more than
 * is held (a double release is a bug, never silently absorbed). Thread-safe.
 */
public final class CountBytesWindow {
    private final String name;
    private final long countMax;
    private final long bytesMax;
    private long count;
    private long bytes;

    public CountBytesWindow(String name, long countMax, long bytesMax) {
        if (countMax < 0 || bytesMax < 0) {
            throw new IllegalArgumentException(name + " bounds must be >= 0, got " + countMax + ", " + bytesMax);
        }
        this.name = name;
        this.countMax = countMax;
        this.bytesMax = bytesMax;
    }

    /** Which bound a refused {@link #tryAdd} hit. */
    public enum Full {
        NONE,
        COUNT,
        BYTES
    }

    /** Takes {@code n} and {@code b} if both fit; otherwise takes nothing and names the full bound. */
    public synchronized Full tryAdd(long n, long b) {
        if (n < 0 || b < 0) {
            throw new IllegalArgumentException(name + ": cannot add " + n + " / " + b);
        }
        if (count + n > countMax) {
            return Full.COUNT;
        }
        if (bytes + b > bytesMax) {
            return Full.BYTES;
        }
        count += n;
        bytes += b;
        return Full.NONE;
    }

    /** Returns {@code n} and {@code b}. */
    public synchronized void release(long n, long b) {
        if (n < 0 || b < 0 || n > count || b > bytes) {
            throw new IllegalStateException(name + ": release of " + n + " / " + b + " bytes exceeds the held "
                    + count + " / " + bytes);
        }
        count -= n;
        bytes -= b;
        assert count >= 0 && bytes >= 0 : name + " holds " + count + " / " + bytes + " bytes";
    }

    public synchronized long count() {
        return count;
    }

    public synchronized long bytes() {
        return bytes;
    }

    public long countMax() {
        return countMax;
    }

    public long bytesMax() {
        return bytesMax;
    }

    @Override
    public synchronized String toString() {
        return name + "[" + count + "/" + countMax + ", " + bytes + "/" + bytesMax + " bytes]";
    }
}
