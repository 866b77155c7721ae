package orbitkv.inventory;

import io.grpc.Context;
import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import orbitkv.membership.NodeId;

/**
 * The rule that binds a member's identity to its peer certificate (issue 33; docs/operations.md "Peer TLS"): under
 * peer mutual TLS a certificate names exactly one node id, as the URI subject alternative name
 * {@value #URI_PREFIX}{@code <node-id>}. A Manager refuses to start with a certificate that does not name its own
 * {@code --node-id}; every peer port (the gRPC peer listener: InventorySession Open, transfer Authorize and
 * Release; the transfer data channel) refuses a requester that claims another node than its certificate names, so
 * one certificate signed by the cluster CA cannot pose as another member.
 *
 * <p>The peer listener puts the authenticated node id of each call's certificate into the call's gRPC
 * {@link Context} under {@link #PEER_NODE_ID}; handlers read it with {@link #current()} (empty without TLS).
 */
public final class PeerIdentity {
    private PeerIdentity() {}

    /** The prefix of the URI subject alternative name that names a node id. */
    public static final String URI_PREFIX = "urn:orbitkv:node:";

    /** The node id of the calling peer's certificate, set by the peer listener under mutual TLS only. */
    public static final Context.Key<NodeId> PEER_NODE_ID = Context.key("orbitkv-peer-node-id");

    /** The SAN type number of a uniformResourceIdentifier (RFC 5280). */
    private static final int SAN_URI = 6;

    /** The SSL session value under which the parsed node id is kept (one parse per TLS session, not per call). */
    private static final String SESSION_VALUE = "orbitkv.peer-node-id";

    /** The authenticated peer node id of the current gRPC call; empty when the listener is not mutual TLS. */
    public static Optional<NodeId> current() {
        return Optional.ofNullable(PEER_NODE_ID.get());
    }

    /**
     * The node id {@code certificate} names, or a description of why it names none: no {@value #URI_PREFIX} URI
     * SAN, more than one, or a value that is not a valid node id.
     */
    public static Named of(X509Certificate certificate) {
        Collection<List<?>> sans;
        try {
            sans = certificate.getSubjectAlternativeNames();
        } catch (CertificateParsingException e) {
            return new Named.None("its subject alternative names cannot be parsed: " + e.getMessage());
        }
        NodeId found = null;
        if (sans != null) {
            for (List<?> san : sans) {
                if (san.size() < 2 || !(san.get(0) instanceof Integer type) || type != SAN_URI
                        || !(san.get(1) instanceof String uri) || !uri.startsWith(URI_PREFIX)) {
                    continue;
                }
                NodeId id;
                try {
                    id = new NodeId(uri.substring(URI_PREFIX.length()));
                } catch (IllegalArgumentException e) {
                    return new Named.None("its URI SAN " + uri + " is not a valid node id: " + e.getMessage());
                }
                if (found != null && !found.equals(id)) {
                    return new Named.None("it names two node ids, " + found + " and " + id);
                }
                found = id;
            }
        }
        return found == null ? new Named.None("it has no URI SAN " + URI_PREFIX + "<node-id>") : new Named.Node(found);
    }

    /** The node id named by the peer's (leaf) certificate of {@code session}, or why there is none. */
    public static Named of(SSLSession session) {
        if (session.getValue(SESSION_VALUE) instanceof Named known) {
            return known;
        }
        Named named;
        try {
            Certificate[] chain = session.getPeerCertificates();
            named = chain.length > 0 && chain[0] instanceof X509Certificate x ? of(x)
                    : new Named.None("the peer presented no X.509 certificate");
        } catch (SSLPeerUnverifiedException e) {
            named = new Named.None("the peer presented no verified certificate");
        }
        try {
            session.putValue(SESSION_VALUE, named);
        } catch (RuntimeException ignored) {
            // a session implementation without values: parse again next time
        }
        return named;
    }

    /** What a certificate names. */
    public sealed interface Named {
        /** It names {@code nodeId}. */
        record Node(NodeId nodeId) implements Named {}

        /** It names no node id; {@code why} says why, for the refusal's message. */
        record None(String why) implements Named {}
    }
}
