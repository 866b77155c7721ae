package orbitkv.server.net;

import io.grpc.ManagedChannel;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import orbitkv.membership.Endpoint;

/**
 * The gRPC channels the transfer engine's Authorize and Release calls use, one per admitted peer's peer
 * endpoint, opened lazily through {@link PeerChannels} (mutual TLS when configured) and closed when the peer
 * leaves the membership view ({@link #retain}) or at stop. Bounded: at most {@link #CHANNELS_MAX} channels; a
 * further endpoint is refused with an exception, which the engine turns into a named {@code UNAVAILABLE}
 * Authorize failure (never an unbounded map).
 */
public final class TransferChannels implements AutoCloseable {
    /** Channels kept at once; a membership view holds at most this many peers in any practical cluster. */
    public static final int CHANNELS_MAX = 1024;

    private final PeerChannels channels;
    private final Map<Endpoint, ManagedChannel> open = new LinkedHashMap<>();
    private boolean closed;

    public TransferChannels(PeerChannels channels) {
        this.channels = channels;
    }

    /**
     * The channel to {@code peer}, opened on first use.
     *
     * @throws IllegalStateException when closed or when {@link #CHANNELS_MAX} channels are open
     */
    public synchronized ManagedChannel channel(Endpoint peer) {
        if (closed) {
            throw new IllegalStateException("transfer channels are closed");
        }
        ManagedChannel c = open.get(peer);
        if (c != null) {
            return c;
        }
        if (open.size() >= CHANNELS_MAX) {
            throw new IllegalStateException(CHANNELS_MAX + " transfer channels are open (TransferChannels.CHANNELS_MAX)");
        }
        c = channels.open(peer);
        open.put(peer, c);
        return c;
    }

    /** Closes the channels of endpoints not in {@code admitted} (peers that left the view). */
    public void retain(Collection<Endpoint> admitted) {
        Set<Endpoint> keep = new HashSet<>(admitted);
        List<ManagedChannel> gone = new java.util.ArrayList<>();
        synchronized (this) {
            for (Iterator<Map.Entry<Endpoint, ManagedChannel>> it = open.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<Endpoint, ManagedChannel> e = it.next();
                if (!keep.contains(e.getKey())) {
                    gone.add(e.getValue());
                    it.remove();
                }
            }
        }
        gone.forEach(ManagedChannel::shutdown); // in-flight calls finish; nothing new starts
    }

    public synchronized int size() {
        return open.size();
    }

    @Override
    public void close() {
        List<ManagedChannel> all;
        synchronized (this) {
            closed = true;
            all = List.copyOf(open.values());
            open.clear();
        }
        for (ManagedChannel c : all) {
            c.shutdown();
        }
        for (ManagedChannel c : all) {
            try {
                if (!c.awaitTermination(2, TimeUnit.SECONDS)) {
                    c.shutdownNow();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                c.shutdownNow();
            }
        }
    }
}
