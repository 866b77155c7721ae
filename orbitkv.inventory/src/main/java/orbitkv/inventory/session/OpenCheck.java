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
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.Open;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.ScopeSpec;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeId;

/**
 * Validation of the session header on the source (SES-4, SES-5, SES-7, SES-8, SES-9): every field is
 * checked before any session state exists, in a fixed order, the first failure a named wire cause.
 */
final class OpenCheck {
    private OpenCheck() {}

    /** What the check of an Open came to. */
    sealed interface Result permits Accepted, Refused {}

    /** A valid Open. */
    record Accepted(UUID sessionId, Incarnation requester, Scope scope, Optional<InstalledCursor> resume,
            long windowBytes) implements Result {}

    /** A refused Open: the session answers {@code Error(cause)} and closes. */
    record Refused(Refusal refusal) implements Result {}

    static Result check(RequesterFrame frame, ClusterIdentity cluster, Incarnation self, MembershipView view,
            SessionConfig config) {
        return check(frame, cluster, self, view, config, Optional.empty());
    }

    /**
     * As {@link #check(RequesterFrame, ClusterIdentity, Incarnation, MembershipView, SessionConfig)}, with the node
     * id the caller's certificate names under peer mutual TLS ({@code PeerIdentity}; empty without TLS): an Open whose
     * requester names another node is refused {@code REQUESTER_IDENTITY_MISMATCH} right after the identities parse.
     */
    static Result check(RequesterFrame frame, ClusterIdentity cluster, Incarnation self, MembershipView view,
            SessionConfig config, Optional<NodeId> peerNodeId) {
        if (!frame.hasOpen()) {
            return refused(ErrorCause.MALFORMED_FRAME, "the first requester frame must be Open, got " + frame.getBodyCase());
        }
        Open open = frame.getOpen();
        if (!open.getProtocol().equals(ClusterIdentity.PROTOCOL)) {
            return refused(ErrorCause.PROTOCOL_MISMATCH, "protocol must be '" + ClusterIdentity.PROTOCOL + "'");
        }
        FrameCheck c = new FrameCheck();
        UUID clusterUuid = c.uuid("open.cluster_uuid", open.hasClusterUuid(), open.getClusterUuid());
        if (c.ok() && !clusterUuid.equals(cluster.uuid())) {
            c.refuse(ErrorCause.CLUSTER_MISMATCH, "cluster_uuid " + clusterUuid + " is not this cluster's");
        }
        UUID sessionId = c.uuid("open.session_id", open.hasSessionId(), open.getSessionId());
        if (c.ok() && (!frame.hasSessionId() || !Wire.uuid(frame.getSessionId()).equals(sessionId))) {
            c.refuse(ErrorCause.SESSION_MISMATCH, "frame session_id differs from open.session_id");
        }
        Optional<Incarnation> source = c.incarnation("open.source", open.hasSource(), open.getSource());
        Optional<Incarnation> requester = c.incarnation("open.requester", open.hasRequester(), open.getRequester());
        if (!c.ok()) {
            return new Refused(c.refusal().orElseThrow());
        }
        if (peerNodeId.isPresent() && !peerNodeId.get().equals(requester.orElseThrow().nodeId())) {
            return refused(ErrorCause.REQUESTER_IDENTITY_MISMATCH, "open.requester names node " + requester.orElseThrow().nodeId()
                    + ", the caller's certificate names node " + peerNodeId.get());
        }
        Optional<Refusal> admission = admission(source.orElseThrow(), requester.orElseThrow(), self, view);
        if (admission.isPresent()) {
            return new Refused(admission.get());
        }
        return switch (scope(open)) {
            case ScopeResult.Refused r -> new Refused(r.refusal());
            case ScopeResult.Valid v -> rest(open, sessionId, requester.orElseThrow(), v.scope(), config);
        };
    }

    /** SES-5: membership valid, the source is this admitted incarnation, the requester admitted. */
    private static Optional<Refusal> admission(Incarnation source, Incarnation requester, Incarnation self, MembershipView view) {
        if (!view.valid()) {
            return Optional.of(new Refusal(ErrorCause.MEMBERSHIP_SUSPENDED, "membership is suspended; no remote admission"));
        }
        if (!source.equals(self)) {
            boolean stale = source.nodeId().equals(self.nodeId()) && source.epoch().compareTo(self.epoch()) <= 0;
            return Optional.of(new Refusal(stale ? ErrorCause.STALE_SOURCE_INCARNATION : ErrorCause.UNKNOWN_SOURCE_INCARNATION,
                    "open.source " + source + " is not this incarnation " + self));
        }
        if (!view.isAdmitted(self)) {
            return Optional.of(new Refusal(ErrorCause.MEMBERSHIP_SUSPENDED, "this source incarnation is not admitted by its view"));
        }
        if (!view.isAdmitted(requester)) {
            return Optional.of(new Refusal(ErrorCause.UNKNOWN_REQUESTER_INCARNATION, "open.requester " + requester + " is not admitted"));
        }
        return Optional.empty();
    }

    /** The scope digest, the receive window and the resume point, after the scope is canonical. */
    private static Result rest(Open open, UUID sessionId, Incarnation requester, Scope scope, SessionConfig config) {
        FrameCheck c = new FrameCheck();
        byte[] digest = c.digest("open.scope_digest", open.getScopeDigest());
        if (c.ok() && !Arrays.equals(digest, scope.digest().bytes())) {
            c.refuse(ErrorCause.SCOPE_DIGEST_MISMATCH, "open.scope_digest differs from the recomputed digest");
        }
        long window = c.nonNegative("open.receive_window_bytes", open.getReceiveWindowBytes());
        if (window == 0) {
            window = config.receiveWindowBytes();
        }
        if (c.ok() && window < config.frameEncodedBytesMax()) {
            c.refuse(ErrorCause.MALFORMED_FRAME, "open.receive_window_bytes (" + window
                    + ") must be >= frameEncodedBytesMax (" + config.frameEncodedBytesMax() + ")");
        }
        Optional<InstalledCursor> resume = Optional.empty();
        if (open.hasResume()) {
            UUID viewId = c.uuid("open.resume.view_id", open.getResume().hasViewId(), open.getResume().getViewId());
            long cursor = c.nonNegative("open.resume.applied_cursor", open.getResume().getAppliedCursor());
            resume = Optional.of(new InstalledCursor(viewId, cursor));
        }
        if (!c.ok()) {
            return new Refused(c.refusal().orElseThrow());
        }
        return new Accepted(sessionId, requester, scope, resume, Math.min(window, config.receiveWindowBytes()));
    }

    private static Refused refused(ErrorCause cause, String detail) {
        return new Refused(new Refusal(cause, detail));
    }

    /** A canonical scope or its refusal. */
    sealed interface ScopeResult {
        record Valid(Scope scope) implements ScopeResult {}

        record Refused(Refusal refusal) implements ScopeResult {}
    }

    /** Re-canonicalizes the scope (SES-7, SES-8): at most 256 namespaces of 1..255 bytes. */
    static ScopeResult scope(Open open) {
        if (!open.hasScope()) {
            return scopeRefused("open.scope is missing");
        }
        ScopeSpec spec = open.getScope();
        return switch (spec.getKindCase()) {
            case ALL -> new ScopeResult.Valid(Scope.all());
            case LIST -> list(spec.getList().getNamespacesList());
            case KIND_NOT_SET -> scopeRefused("open.scope sets neither all nor list");
        };
    }

    private static ScopeResult list(List<ByteString> raw) {
        if (raw.size() > Scope.MAX_NAMESPACES) {
            return scopeRefused("open.scope lists " + raw.size() + " namespaces; at most " + Scope.MAX_NAMESPACES);
        }
        List<Namespace> ns = new ArrayList<>(raw.size());
        for (int i = 0; i < raw.size(); i++) {
            int len = raw.get(i).size();
            if (len < 1 || len > Namespace.MAX_BYTES) {
                return scopeRefused("open.scope namespace " + i + " must be 1.." + Namespace.MAX_BYTES + " bytes, got " + len);
            }
            ns.add(new Namespace(raw.get(i).toByteArray()));
        }
        return new ScopeResult.Valid(Scope.of(ns));
    }

    private static ScopeResult scopeRefused(String detail) {
        return new ScopeResult.Refused(new Refusal(ErrorCause.SCOPE_INVALID, detail));
    }
}
