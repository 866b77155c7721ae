package orbitkv.transfer.source;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeId;
import orbitkv.transfer.BlockRef;
import orbitkv.transfer.Intent;
import orbitkv.transfer.RefusalReason;
import orbitkv.transfer.TransferConfig;
import orbitkv.transfer.frame.WireCodec;
import orbitkv.transfer.frame.WireCodec.WireException;
import orbitkv.transfer.wire.AuthorizeRequest;
import orbitkv.transfer.wire.ReleaseRequest;

/**
 * Validation of an Authorize request (docs/transfer.md "Authorize"): every field is checked, in a fixed order,
 * before any pin is taken, each failure one request-level {@link RefusalReason}. A refused request changes no
 * state (INV-2, BND-1).
 *
 * <p>Order: protocol, cluster, identities well-formed, requester identity against the caller's certificate (under
 * peer mutual TLS), source fenced/closing, membership valid, expected
 * source is this incarnation, source admitted, requester admitted, intent, block count, each block's fields,
 * duplicates, boot id.
 */
final class AuthorizeCheck {
    private AuthorizeCheck() {}

    /** A valid request. */
    record Valid(Incarnation requester, Intent intent, List<BlockRef> blocks, UUID requesterBootId) {}

    /** The state of this source that the checks read. */
    enum SourceState {
        SERVING,
        FENCED,
        CLOSED
    }

    static Valid check(AuthorizeRequest r, ClusterIdentity cluster, Incarnation self, SourceState state,
            MembershipView view, TransferConfig config) throws WireException {
        return check(r, cluster, self, state, view, config, Optional.empty());
    }

    /**
     * As above, with the node id the caller's certificate names under peer mutual TLS ({@code PeerIdentity}; empty
     * without TLS): a requester naming another node is refused {@code REQUESTER_IDENTITY_MISMATCH} right after the
     * identities parse, before anything else about it is looked at.
     */
    static Valid check(AuthorizeRequest r, ClusterIdentity cluster, Incarnation self, SourceState state,
            MembershipView view, TransferConfig config, Optional<NodeId> peerNodeId) throws WireException {
        if (!r.getProtocol().equals(WireCodec.PROTOCOL)) {
            throw new WireException(RefusalReason.PROTOCOL_MISMATCH, "protocol must be '" + WireCodec.PROTOCOL + "'");
        }
        UUID clusterUuid = WireCodec.uuid("cluster_uuid", r.hasClusterUuid(), r.getClusterUuid());
        if (!clusterUuid.equals(cluster.uuid())) {
            throw new WireException(RefusalReason.CLUSTER_MISMATCH, "cluster_uuid " + clusterUuid + " is not this cluster's");
        }
        Incarnation requester = WireCodec.incarnation("requester", r.hasRequester(), r.getRequester());
        Incarnation source = WireCodec.incarnation("source", r.hasSource(), r.getSource());
        checkIdentity(requester, peerNodeId);
        checkSource(source, self, state, view);
        if (!view.isAdmitted(requester)) {
            throw new WireException(RefusalReason.REQUESTER_NOT_ADMITTED, "requester " + requester + " is not admitted");
        }
        Intent intent = WireCodec.intent("intent", r.getIntentValue());
        int n = r.getBlocksCount();
        if (n == 0) {
            throw new WireException(RefusalReason.MALFORMED_REQUEST, "blocks is empty");
        }
        if (n > config.authorizeKeysMax()) {
            throw new WireException(RefusalReason.TOO_MANY_KEYS,
                    n + " blocks; at most authorizeKeysMax " + config.authorizeKeysMax());
        }
        List<BlockRef> blocks = new ArrayList<>(n);
        Set<Residence> seen = new HashSet<>(n * 2);
        for (int i = 0; i < n; i++) {
            BlockRef b = block(i, r.getBlocks(i));
            if (!seen.add(new Residence(b.key(), b.medium()))) {
                throw new WireException(RefusalReason.DUPLICATE_KEY, "blocks[" + i + "] repeats " + b.key() + " " + b.medium());
            }
            blocks.add(b);
        }
        UUID bootId = WireCodec.bootId("requester_boot_id", r.getRequesterBootId());
        return new Valid(requester, intent, blocks, bootId);
    }

    /** Under peer mutual TLS, the requester must be the node the caller's certificate names. */
    static void checkIdentity(Incarnation requester, Optional<NodeId> peerNodeId) throws WireException {
        if (peerNodeId.isPresent() && !peerNodeId.get().equals(requester.nodeId())) {
            throw new WireException(RefusalReason.REQUESTER_IDENTITY_MISMATCH, "requester names node "
                    + requester.nodeId() + ", the caller's certificate names node " + peerNodeId.get());
        }
    }

    /** The checks a Release shares with Authorize: protocol, cluster, requester well-formed and, under TLS, the caller's. */
    static Incarnation checkRelease(ReleaseRequest r, ClusterIdentity cluster, Optional<NodeId> peerNodeId)
            throws WireException {
        Incarnation requester = checkRelease(r, cluster);
        checkIdentity(requester, peerNodeId);
        return requester;
    }

    /** The checks a Release shares with Authorize: protocol, cluster, requester well-formed. */
    static Incarnation checkRelease(ReleaseRequest r, ClusterIdentity cluster) throws WireException {
        if (!r.getProtocol().equals(WireCodec.PROTOCOL)) {
            throw new WireException(RefusalReason.PROTOCOL_MISMATCH, "protocol must be '" + WireCodec.PROTOCOL + "'");
        }
        UUID clusterUuid = WireCodec.uuid("cluster_uuid", r.hasClusterUuid(), r.getClusterUuid());
        if (!clusterUuid.equals(cluster.uuid())) {
            throw new WireException(RefusalReason.CLUSTER_MISMATCH, "cluster_uuid " + clusterUuid + " is not this cluster's");
        }
        return WireCodec.incarnation("requester", r.hasRequester(), r.getRequester());
    }

    private static void checkSource(Incarnation source, Incarnation self, SourceState state, MembershipView view)
            throws WireException {
        if (state == SourceState.FENCED) {
            throw new WireException(RefusalReason.SOURCE_FENCED, "source " + self + " is fenced");
        }
        if (state == SourceState.CLOSED) {
            throw new WireException(RefusalReason.SHUTTING_DOWN, "source " + self + " is shutting down");
        }
        if (!view.valid()) {
            throw new WireException(RefusalReason.MEMBERSHIP_SUSPENDED, "membership is suspended; no remote admission");
        }
        if (!source.equals(self)) {
            boolean stale = source.nodeId().equals(self.nodeId()) && source.epoch().compareTo(self.epoch()) <= 0;
            throw new WireException(stale ? RefusalReason.STALE_SOURCE_INCARNATION : RefusalReason.WRONG_SOURCE_INCARNATION,
                    "expected source " + source + " is not this incarnation " + self);
        }
        if (!view.isAdmitted(self)) {
            throw new WireException(RefusalReason.MEMBERSHIP_SUSPENDED, "this source incarnation is not admitted by its view");
        }
    }

    private static BlockRef block(int i, orbitkv.transfer.wire.BlockRef b) throws WireException {
        String f = "blocks[" + i + "]";
        int nsLen = b.getNamespace().size();
        if (nsLen < 1 || nsLen > Namespace.MAX_BYTES) {
            throw new WireException(RefusalReason.MALFORMED_REQUEST, f + ".namespace must be 1.." + Namespace.MAX_BYTES
                    + " bytes, got " + nsLen);
        }
        int keyLen = b.getKey().size();
        if (keyLen < 1 || keyLen > StateKey.MAX_KEY_BYTES) {
            throw new WireException(RefusalReason.MALFORMED_REQUEST, f + ".key must be 1.." + StateKey.MAX_KEY_BYTES
                    + " bytes, got " + keyLen);
        }
        Medium medium = WireCodec.medium(f + ".medium", b.getMediumValue());
        long seq = b.getResidencySequence();
        if (seq < 1) { // zero, or a fixed64 above 2^63-1 (an overflow, never wrapped)
            throw new WireException(RefusalReason.MALFORMED_REQUEST, f + ".residency_sequence must be 1..2^63-1, got "
                    + Long.toUnsignedString(seq));
        }
        StateKey key = new StateKey(new Namespace(b.getNamespace().toByteArray()), b.getKey().toByteArray());
        return new BlockRef(key, medium, seq);
    }

    private record Residence(StateKey key, Medium medium) {}
}
