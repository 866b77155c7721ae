package orbitkv.server.http;

/**
 * The bound on request body bytes admitted at once across all connections ({@code --http-body-bytes-in-flight-max};
 * issue 20 item 4, INV-9). A request reserves its declared {@code Content-Length} before any body byte is
 * read, or each chunk of a chunked body as it arrives; it releases exactly what it reserved when it is
 * answered or its connection closes. A reservation that would exceed the bound is refused (the caller answers
 * 429 {@code TOO_MANY_BODY_BYTES_IN_FLIGHT}), never waited for. Where admitted bytes land (heap buffers,
 * the DRAM arena) does not matter to this bound. Shared by the event loops: synchronized, tiny critical sections.
 */
final class BodyBytesBudget {
    private final long max;
    private long used;
    private long peak;
    private long refused;

    BodyBytesBudget(long max) {
        if (max < 1) {
            throw new IllegalArgumentException("body bytes in flight bound must be positive, got " + max);
        }
        this.max = max;
    }

    /** Reserves {@code bytes}; false (and nothing reserved) if the bound would be exceeded. */
    synchronized boolean tryReserve(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("cannot reserve " + bytes + " bytes");
        }
        if (used + bytes > max) {
            refused++;
            return false;
        }
        used += bytes;
        peak = Math.max(peak, used);
        return true;
    }

    /** Returns {@code bytes} reserved earlier; more than is reserved is a bug. */
    synchronized void release(long bytes) {
        if (bytes < 0 || bytes > used) {
            throw new IllegalStateException("release of " + bytes + " bytes with " + used + " reserved");
        }
        used -= bytes;
    }

    long max() {
        return max;
    }

    synchronized long used() {
        return used;
    }

    synchronized long peak() {
        return peak;
    }

    synchronized long refused() {
        return refused;
    }
}
