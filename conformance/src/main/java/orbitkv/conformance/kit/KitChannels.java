package orbitkv.conformance.kit;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import orbitkv.conformance.peer.AdversarialRequester;
import orbitkv.membership.Endpoint;
import orbitkv.membership.NodeId;

/**
 * One row's channels to the target's peer listener. Plaintext: one channel carries every kit requester's
 * sessions. Under peer mutual TLS ({@link KitPeerTls}) a channel presents one member's certificate and the target
 * admits only that member's Opens on it (issue 33), so there is one channel per kit node id the row speaks as, at
 * most {@link KitMembers#MEMBERS_MAX} + 1 (a row opening more is a kit bug: refused by name).
 */
@SuppressWarnings("try") // close() waits for the channels to terminate, so it may be interrupted
final class KitChannels implements AutoCloseable {
    private final Endpoint target;
    private final Optional<KitPeerTls> tls;
    private final Map<String, AdversarialRequester> open = new LinkedHashMap<>();
    private boolean closed;

    KitChannels(Endpoint target, Optional<KitPeerTls> tls) {
        this.target = target;
        this.tls = tls;
    }

    /** A new raw stream on the channel that speaks as {@code node} (the same plaintext channel for every node). */
    AdversarialRequester.Session open(NodeId node) {
        return channel(node).open();
    }

    private synchronized AdversarialRequester channel(NodeId node) {
        if (closed) {
            throw new IllegalStateException("the row's channels are closed (its deadline passed)");
        }
        String key = tls.isPresent() ? node.value() : "";
        AdversarialRequester c = open.get(key);
        if (c == null) {
            if (open.size() > KitMembers.MEMBERS_MAX) {
                throw new IllegalStateException("a row speaks as more than " + (KitMembers.MEMBERS_MAX + 1) + " kit nodes");
            }
            c = tls.isPresent() ? AdversarialRequester.connect(target, tls.get().files(key)) : AdversarialRequester.connect(target);
            open.put(key, c);
        }
        return c;
    }

    /** Ends every channel (idempotent), so every stream and wait of the row returns. */
    @Override
    public void close() throws InterruptedException {
        List<AdversarialRequester> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(open.values());
            open.clear();
        }
        for (AdversarialRequester c : all) {
            c.close();
        }
    }
}
