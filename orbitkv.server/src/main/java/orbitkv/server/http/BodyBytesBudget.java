package orbitkv.server.http;

import java.util.HashMap;
import java.util.Map;

/**
 * The bound on request body bytes admitted at once across all connections ({@code --http-body-bytes-in-flight-max};
 * issue 20 item 4, INV-9) and, within it, for one client ({@code --http-body-bytes-in-flight-per-client-max};
 * issue 33: slow uploads from one address must not make every other client's body requests answer 429). A
 * request reserves its declared {@code Content-Length} before any body byte is read, or each chunk of a chunked
 * body as it arrives; it releases exactly what it reserved when it is answered or its connection closes. A
 * reservation that would exceed either bound is refused (the caller answers 429
 * {@code TOO_MANY_BODY_BYTES_IN_FLIGHT} or {@code TOO_MANY_CLIENT_BODY_BYTES_IN_FLIGHT}), never waited for.
 * Where admitted bytes land (heap buffers, the DRAM arena) does not matter to this bound. Shared by the event
 * loops: synchronized, tiny critical sections.
 *
 * <p>The per-client table holds only clients with bytes reserved; every reservation belongs to an admitted
 * request, so it has at most {@code --http-requests-in-flight-max} entries.
 */
final class BodyBytesBudget {
    /** The outcome of {@link #tryReserve}. */
    enum Reservation {
        ADMITTED,
        /** The bound across all connections would be exceeded. */
        TOTAL_EXCEEDED,
        /** The client's share would be exceeded. */
        CLIENT_EXCEEDED
    }

    private final long max;
    private final long perClientMax;
    private final Map<Object, Long> byClient = new HashMap<>();
    private long used;
    private long peak;
    private long refused;
    private long refusedPerClient;

    BodyBytesBudget(long max, long perClientMax) {
        if (max < 1 || perClientMax < 1) {
            throw new IllegalArgumentException("body bytes in flight bounds must be positive, got " + max + ", " + perClientMax);
        }
        this.max = max;
        this.perClientMax = Math.min(max, perClientMax);
    }

    /**
     * Reserves {@code bytes} for {@code client} (a key with value equality: the client address); nothing is
     * reserved unless the answer is {@link Reservation#ADMITTED}.
     */
    synchronized Reservation tryReserve(Object client, long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("cannot reserve " + bytes + " bytes");
        }
        if (used + bytes > max) { // the whole first: when both are exceeded, the server is full, not the client
            refused++;
            return Reservation.TOTAL_EXCEEDED;
        }
        long mine = byClient.getOrDefault(client, 0L);
        if (mine + bytes > perClientMax) {
            refusedPerClient++;
            return Reservation.CLIENT_EXCEEDED;
        }
        if (bytes > 0) {
            byClient.put(client, mine + bytes);
        }
        used += bytes;
        peak = Math.max(peak, used);
        return Reservation.ADMITTED;
    }

    /** Returns {@code bytes} reserved earlier by {@code client}; more than it reserved is a bug. */
    synchronized void release(Object client, long bytes) {
        long mine = byClient.getOrDefault(client, 0L);
        if (bytes < 0 || bytes > used || bytes > mine) {
            throw new IllegalStateException("release of " + bytes + " bytes with " + used + " reserved, " + mine
                    + " by this client");
        }
        used -= bytes;
        if (mine == bytes) {
            byClient.remove(client);
        } else {
            byClient.put(client, mine - bytes);
        }
    }

    long max() {
        return max;
    }

    /** The effective share of one client: {@code --http-body-bytes-in-flight-per-client-max} capped at {@link #max}. */
    long perClientMax() {
        return perClientMax;
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

    synchronized long refusedPerClient() {
        return refusedPerClient;
    }

    /** Clients holding reserved bytes now. */
    synchronized int clients() {
        return byClient.size();
    }
}
