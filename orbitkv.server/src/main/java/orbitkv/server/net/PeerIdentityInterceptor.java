package orbitkv.server.net;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLSession;
import orbitkv.inventory.PeerIdentity;

/**
 * Member identity on the mutual-TLS peer listener (issue 33): every call's peer certificate must name a node id
 * ({@link PeerIdentity}: the URI SAN {@code urn:orbitkv:node:<node-id>}); the call then runs with that node id in
 * its gRPC context ({@link PeerIdentity#PEER_NODE_ID}), where InventorySession Open and transfer Authorize/Release
 * compare it with the requester they claim to be ({@code REQUESTER_IDENTITY_MISMATCH}). A call whose certificate names
 * no node is closed {@code PERMISSION_DENIED} before any handler sees it, and counted.
 */
final class PeerIdentityInterceptor implements ServerInterceptor {
    /** Calls refused because their certificate names no node id. */
    final LongAdder refused = new LongAdder();

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
            ServerCallHandler<ReqT, RespT> next) {
        SSLSession session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
        PeerIdentity.Named named = session == null ? new PeerIdentity.Named.None("the call did not come over TLS")
                : PeerIdentity.of(session);
        return switch (named) {
            case PeerIdentity.Named.Node n -> Contexts.interceptCall(
                    Context.current().withValue(PeerIdentity.PEER_NODE_ID, n.nodeId()), call, headers, next);
            case PeerIdentity.Named.None none -> {
                refused.increment();
                call.close(Status.PERMISSION_DENIED.withDescription("the peer certificate names no member: "
                        + none.why() + " (" + PeerIdentity.URI_PREFIX + "<node-id>)"), new Metadata());
                yield new ServerCall.Listener<>() {};
            }
        };
    }
}
