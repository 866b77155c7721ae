package orbitkv.inventory.session;

import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.session.Wire.Refused;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.Open;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.ScopeSpec;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;

/**
 * Validation of the session header on the source (SES-4, SES-5, SES-7, SES-8, SES-9): every field is
 * checked before any session state exists, in a fixed order, each failure a named wire cause.
 */
final class OpenCheck {
    private OpenCheck() {}

    /** A valid Open. */
    record Accepted(UUID sessionId, Incarnation requester, Scope scope, Optional<InstalledCursor> resume,
            long windowBytes) {}

    static Accepted check(RequesterFrame frame, ClusterIdentity cluster, Incarnation self, MembershipView view,
            SessionConfig config) throws Refused {
        if (!frame.hasOpen()) {
            throw new Refused(ErrorCause.MALFORMED_FRAME, "the first requester frame must be Open, got " + frame.getBodyCase());
        }
        Open open = frame.getOpen();
        if (!open.getProtocol().equals(ClusterIdentity.PROTOCOL)) {
            throw new Refused(ErrorCause.PROTOCOL_MISMATCH, "protocol must be '" + ClusterIdentity.PROTOCOL + "'");
        }
        UUID clusterUuid = Wire.requiredUuid("open.cluster_uuid", open.hasClusterUuid(), open.getClusterUuid());
        if (!clusterUuid.equals(cluster.uuid())) {
            throw new Refused(ErrorCause.CLUSTER_MISMATCH, "cluster_uuid " + clusterUuid + " is not this cluster's");
        }
        UUID sessionId = Wire.requiredUuid("open.session_id", open.hasSessionId(), open.getSessionId());
        if (!frame.hasSessionId() || !Wire.uuid(frame.getSessionId()).equals(sessionId)) {
            throw new Refused(ErrorCause.SESSION_MISMATCH, "frame session_id differs from open.session_id");
        }
        Incarnation source = Wire.incarnation("open.source", open.hasSource(), open.getSource());
        Incarnation requester = Wire.incarnation("open.requester", open.hasRequester(), open.getRequester());
        if (!view.valid()) {
            throw new Refused(ErrorCause.MEMBERSHIP_SUSPENDED, "membership is suspended; no remote admission");
        }
        if (!source.equals(self)) {
            boolean stale = source.nodeId().equals(self.nodeId()) && source.epoch().compareTo(self.epoch()) <= 0;
            throw new Refused(stale ? ErrorCause.STALE_SOURCE_INCARNATION : ErrorCause.UNKNOWN_SOURCE_INCARNATION,
                    "open.source " + source + " is not this incarnation " + self);
        }
        if (!view.isAdmitted(self)) {
            throw new Refused(ErrorCause.MEMBERSHIP_SUSPENDED, "this source incarnation is not admitted by its view");
        }
        if (!view.isAdmitted(requester)) {
            throw new Refused(ErrorCause.UNKNOWN_REQUESTER_INCARNATION, "open.requester " + requester + " is not admitted");
        }
        Scope scope = scope(open);
        byte[] digest = Wire.digest("open.scope_digest", open.getScopeDigest());
        if (!Arrays.equals(digest, scope.digest().bytes())) {
            throw new Refused(ErrorCause.SCOPE_DIGEST_MISMATCH, "open.scope_digest differs from the recomputed digest");
        }
        long window = Wire.nonNegative("open.receive_window_bytes", open.getReceiveWindowBytes());
        if (window == 0) {
            window = config.receiveWindowBytes();
        }
        if (window < config.frameEncodedBytesMax()) {
            throw new Refused(ErrorCause.MALFORMED_FRAME, "open.receive_window_bytes (" + window
                    + ") must be >= frameEncodedBytesMax (" + config.frameEncodedBytesMax() + ")");
        }
        Optional<InstalledCursor> resume = Optional.empty();
        if (open.hasResume()) {
            UUID viewId = Wire.requiredUuid("open.resume.view_id", open.getResume().hasViewId(), open.getResume().getViewId());
            long cursor = Wire.nonNegative("open.resume.applied_cursor", open.getResume().getAppliedCursor());
            resume = Optional.of(new InstalledCursor(viewId, cursor));
        }
        return new Accepted(sessionId, requester, scope, resume, Math.min(window, config.receiveWindowBytes()));
    }

    /** Re-canonicalizes the scope (SES-7, SES-8): at most 256 namespaces of 1..255 bytes. */
    static Scope scope(Open open) throws Refused {
        if (!open.hasScope()) {
            throw new Refused(ErrorCause.SCOPE_INVALID, "open.scope is missing");
        }
        ScopeSpec spec = open.getScope();
        return switch (spec.getKindCase()) {
            case ALL -> Scope.all();
            case LIST -> {
                List<ByteString> raw = spec.getList().getNamespacesList();
                if (raw.size() > Scope.MAX_NAMESPACES) {
                    throw new Refused(ErrorCause.SCOPE_INVALID,
                            "open.scope lists " + raw.size() + " namespaces; at most " + Scope.MAX_NAMESPACES);
                }
                List<Namespace> ns = new ArrayList<>(raw.size());
                for (int i = 0; i < raw.size(); i++) {
                    int len = raw.get(i).size();
                    if (len < 1 || len > Namespace.MAX_BYTES) {
                        throw new Refused(ErrorCause.SCOPE_INVALID,
                                "open.scope namespace " + i + " must be 1.." + Namespace.MAX_BYTES + " bytes, got " + len);
                    }
                    ns.add(new Namespace(raw.get(i).toByteArray()));
                }
                yield Scope.of(ns);
            }
            case KIND_NOT_SET -> throw new Refused(ErrorCause.SCOPE_INVALID, "open.scope sets neither all nor list");
        };
    }
}
