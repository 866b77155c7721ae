package orbitkv.server.http;

import java.util.HashMap;
import java.util.Map;
import orbitkv.server.tier.ByteBudget;

/**
 * The bound on request body bytes admitted at once across all connections ({@code --http-body-bytes-in-flight-max};
 * issue 20 item 4, INV-9) and, within it, for one client ({@code --http-body-bytes-in-flight-per-client-max};
 * issue 33: slow uploads from one address must not make every other client's body requests answer 429). A
 * request reserves its declared {@code Content-Length} before any body byte is read, or each chunk of a chunked
 * body as it arrives; it releases exactly what it reserved when it is answered or its connection closes. A
 * reservation that would exceed either bound is refused (the caller answers 429
 * {@code TOO_MANY_BODY_BYTES_IN_FLIGHT} or {@code TOO_MANY_CLIENT_BODY_BYTES_IN_FLIGHT}), never waited for.
 * Where admitted bytes land (heap buffers, the DRAM arena) does not matter to this bound. Shared by the event
 * loops: synchronized, tiny critical sections. The whole is a {@link ByteBudget}; the per-client shares sit beside it.
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

    private final ByteBudget total;
    private final long perClientMax;
    private final Map<Object, Long> byClient = new HashMap<>();
    private long refusedPerClient;

    BodyBytesBudget(long max, long perClientMax) {
        if (max < 1 || perClientMax < 1) {
            throw new IllegalArgumentException("body bytes in flight bounds must be positive, got " + max + ", " + perClientMax);
        }
        this.total = new ByteBudget("HTTP body bytes in flight", max);
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
        // the whole first: when both are exceeded, the server is full, not the client. The whole is changed only
        // under this lock, so a share checked against it here still fits when taken.
        long mine = byClient.getOrDefault(client, 0L);
        if (mine + bytes > perClientMax && bytes <= total.bytesMax() - total.heldBytes()) {
            refusedPerClient++;
            return Reservation.CLIENT_EXCEEDED;
        }
        if (!total.tryTake(bytes)) {
            return Reservation.TOTAL_EXCEEDED;
        }
        if (bytes > 0) {
            byClient.put(client, mine + bytes);
        }
        return Reservation.ADMITTED;
    }

    /** Returns {@code bytes} reserved earlier by {@code client}; more than it reserved is a bug. */
    synchronized void release(Object client, long bytes) {
        long mine = byClient.getOrDefault(client, 0L);
        if (bytes < 0 || bytes > total.heldBytes() || bytes > mine) {
            throw new IllegalStateException("release of " + bytes + " bytes with " + total.heldBytes() + " reserved, " + mine
                    + " by this client");
        }
        total.release(bytes);
        if (mine == bytes) {
            byClient.remove(client);
        } else {
            byClient.put(client, mine - bytes);
        }
        assert mine - bytes >= 0 : "client holds " + (mine - bytes);
    }

    long max() {
        return total.bytesMax();
    }

    /** The effective share of one client: {@code --http-body-bytes-in-flight-per-client-max} capped at {@link #max}. */
    long perClientMax() {
        return perClientMax;
    }

    long used() {
        return total.heldBytes();
    }

    long peak() {
        return total.peakBytes();
    }

    long refused() {
        return total.refusals();
    }

    synchronized long refusedPerClient() {
        return refusedPerClient;
    }

    /** Clients holding reserved bytes now. */
    synchronized int clients() {
        return byClient.size();
    }
}
