package orbitkv.transfer.source;

import com.google.protobuf.ByteString;
import io.grpc.BindableService;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeId;
import orbitkv.inventory.PeerIdentity;
import orbitkv.transfer.PayloadSource;
import orbitkv.transfer.PayloadSource.PayloadLocation;
import orbitkv.transfer.RefusalReason;
import orbitkv.transfer.TransferConfig;
import orbitkv.transfer.frame.BoundedMessage;
import orbitkv.transfer.frame.HostIdentity;
import orbitkv.transfer.frame.WireCodec;
import orbitkv.transfer.frame.WireCodec.WireException;
import orbitkv.transfer.wire.AuthorizeRequest;
import orbitkv.transfer.wire.AuthorizeResponse;
import orbitkv.transfer.wire.Authorized;
import orbitkv.transfer.wire.BlockRefusal;
import orbitkv.transfer.wire.BlockResult;
import orbitkv.transfer.wire.GrantedBlock;
import orbitkv.transfer.wire.ReleaseRequest;
import orbitkv.transfer.wire.ReleaseResponse;
import orbitkv.transfer.wire.ReleaseStatus;
import orbitkv.transfer.wire.RequestRefusal;
import orbitkv.transfer.wire.SharedArena;
import orbitkv.transfer.wire.TransferAuthorizationGrpc;

/**
 * The {@code orbitkv.transfer.v1.TransferAuthorization} service (docs/transfer.md): Authorize validates with
 * {@link AuthorizeCheck}, then pins through the {@link GrantTable}; Release ends a grant. Requests are bounded
 * by encoded size before they are parsed ({@link BoundedMessage}); the handlers never wait on I/O or block, so
 * the Manager runs them on the peer listener's event loop, where a release never queues behind payload traffic or
 * the snapshot serialization that runs on gRPC's executor (BND-2).
 */
final class AuthorizationService {
    private final ClusterIdentity cluster;
    private final Incarnation self;
    private final Supplier<MembershipView> membership;
    private final Supplier<AuthorizeCheck.SourceState> state;
    private final TransferConfig config;
    private final GrantTable grants;
    private final PayloadSource payloads;
    private final SourceCounters counters;
    private final Supplier<Endpoint> dataEndpoint;
    private final UUID bootId;
    private final LoadMeter load;
    /** The last arena advertised (volatile: Authorize calls run on the peer listener's threads). */
    private volatile ArenaAdvert advert;

    /**
     * Refusals that carry no load summary (ROUTE-9): the request is not from this cluster's protocol, could not
     * be read far enough to know, or this source is not serving (fenced, closing, suspended), so its load is no
     * evidence about a route. Every other answer carries one.
     */
    private static final Set<RefusalReason> REFUSALS_WITHOUT_LOAD = EnumSet.of(RefusalReason.PROTOCOL_MISMATCH,
            RefusalReason.CLUSTER_MISMATCH, RefusalReason.MALFORMED_REQUEST, RefusalReason.REQUEST_TOO_LARGE,
            RefusalReason.SOURCE_FENCED, RefusalReason.SHUTTING_DOWN, RefusalReason.MEMBERSHIP_SUSPENDED,
            RefusalReason.REQUESTER_IDENTITY_MISMATCH);

    AuthorizationService(ClusterIdentity cluster, Incarnation self, Supplier<MembershipView> membership,
            Supplier<AuthorizeCheck.SourceState> state, TransferConfig config, GrantTable grants,
            PayloadSource payloads, SourceCounters counters, Supplier<Endpoint> dataEndpoint, UUID bootId,
            LoadMeter load) {
        this.cluster = cluster;
        this.self = self;
        this.membership = membership;
        this.state = state;
        this.config = config;
        this.grants = grants;
        this.payloads = payloads;
        this.counters = counters;
        this.dataEndpoint = dataEndpoint;
        this.bootId = bootId;
        this.load = load;
    }

    BindableService bindable() {
        MethodDescriptor<BoundedMessage<AuthorizeRequest>, AuthorizeResponse> authorize =
                TransferAuthorizationGrpc.getAuthorizeMethod().toBuilder(
                        BoundedMessage.marshaller(AuthorizeRequest.parser(), config.authorizeRequestBytesMax()),
                        ProtoUtils.marshaller(AuthorizeResponse.getDefaultInstance())).build();
        MethodDescriptor<BoundedMessage<ReleaseRequest>, ReleaseResponse> release =
                TransferAuthorizationGrpc.getReleaseMethod().toBuilder(
                        BoundedMessage.marshaller(ReleaseRequest.parser(), config.authorizeRequestBytesMax()),
                        ProtoUtils.marshaller(ReleaseResponse.getDefaultInstance())).build();
        ServerServiceDefinition def = ServerServiceDefinition.builder(TransferAuthorizationGrpc.SERVICE_NAME)
                .addMethod(authorize, ServerCalls.asyncUnaryCall(this::authorize))
                .addMethod(release, ServerCalls.asyncUnaryCall(this::release))
                .build();
        return () -> def;
    }

    private void authorize(BoundedMessage<AuthorizeRequest> in, StreamObserver<AuthorizeResponse> out) {
        out.onNext(authorize(in, PeerIdentity.current()));
        out.onCompleted();
    }

    /** The whole Authorize decision (also used directly by tests and benchmarks), without TLS. */
    AuthorizeResponse authorize(BoundedMessage<AuthorizeRequest> in) {
        return authorize(in, Optional.empty());
    }

    /**
     * The whole Authorize decision; {@code peerNodeId} is the node id the caller's certificate names under peer
     * mutual TLS (the peer listener's {@code PeerIdentity} context), empty without TLS.
     */
    AuthorizeResponse authorize(BoundedMessage<AuthorizeRequest> in, Optional<NodeId> peerNodeId) {
        AuthorizeCheck.Valid valid;
        boolean releaseAfterLastRead;
        try {
            AuthorizeRequest request = parsed(in);
            releaseAfterLastRead = request.getReleaseAfterLastRead();
            valid = AuthorizeCheck.check(request, cluster, self, state.get(), membership.get(), config, peerNodeId);
        } catch (WireException e) {
            counters.refusals.increment(e.reason());
            AuthorizeResponse.Builder refused = AuthorizeResponse.newBuilder().setRefused(RequestRefusal.newBuilder()
                    .setReason(WireCodec.reason(e.reason())).setDetail(WireCodec.detail(e.getMessage())));
            if (!REFUSALS_WITHOUT_LOAD.contains(e.reason())) {
                refused.setLoad(WireCodec.load(load.summary(self)));
            }
            return refused.build();
        }
        GrantTable.Issued issued = grants.issue(valid.requester(), valid.intent(), valid.blocks(), payloads,
                releaseAfterLastRead);
        return AuthorizeResponse.newBuilder().setAuthorized(authorized(issued, valid.requesterBootId()))
                .setLoad(WireCodec.load(load.summary(self))).build();
    }

    private Authorized authorized(GrantTable.Issued issued, UUID requesterBootId) {
        Authorized.Builder a = Authorized.newBuilder().setExpiryMs(config.grantExpiryMs())
                .setSourceBootId(WireCodec.bootId(bootId));
        Endpoint data = dataEndpoint.get();
        a.getDataBuilder().setHost(data.host()).setPort(data.port());
        if (issued.grant() != null) {
            a.setGrantId(WireCodec.uuid(issued.grant().id)).setGrantSecret(ByteString.copyFrom(issued.grant().secret))
                    .setReleaseAfterLastRead(issued.grant().releaseAfterLastRead);
        }
        Path arena = bootId != null && bootId.equals(requesterBootId) ? sharedArena(issued.blocks(), a) : null;
        for (GrantTable.BlockOutcome o : issued.blocks()) {
            a.addBlocks(switch (o) {
                case GrantTable.BlockOutcome.Granted g -> granted(g.pin(), arena);
                case GrantTable.BlockOutcome.Refused r -> BlockResult.newBuilder().setRefused(BlockRefusal.newBuilder()
                        .setReason(WireCodec.reason(r.reason())).setCurrentSequence(r.currentSequence())
                        .setDetail(WireCodec.detail(r.detail()))).build();
            });
        }
        return a.build();
    }

    private static BlockResult granted(PayloadSource.PinResult.Pinned pin, Path arena) {
        GrantedBlock.Builder g = GrantedBlock.newBuilder().setLength(pin.sizeBytes()).setCrc32C(pin.crc32c());
        if (arena != null && pin.location() instanceof PayloadLocation.InArena in && in.arenaFile().equals(arena)) {
            g.setInArena(true).setArenaOffset(in.offset());
        }
        return BlockResult.newBuilder().setGranted(g).build();
    }

    /** Names the arena of the first granted DRAM block to a same-host requester; null if there is none. */
    private Path sharedArena(List<GrantTable.BlockOutcome> blocks, Authorized.Builder a) {
        for (GrantTable.BlockOutcome o : blocks) {
            if (o instanceof GrantTable.BlockOutcome.Granted g && g.pin().location() instanceof PayloadLocation.InArena in) {
                SharedArena advert = arenaAdvert(in.arenaFile());
                if (advert == null) {
                    return null; // no shared arena: the requester reads over TCP
                }
                a.setArena(advert);
                return in.arenaFile();
            }
        }
        return null;
    }

    /**
     * The advert of {@code file}: its path and (device, inode, size) identity, read once per arena file and kept
     * (one entry: a tier has one arena for its life, and a new tier's arena has a new name). Before, every Authorize
     * stat-ed the file (5 % of a source's CPU in a one-block restore loop). Kept identities cannot hand out the
     * wrong file: the requester checks the identity of what it opened and reads over TCP on any difference.
     */
    private SharedArena arenaAdvert(Path file) {
        ArenaAdvert known = advert;
        if (known != null && known.file().equals(file)) {
            return known.message();
        }
        try {
            HostIdentity.FileIdentity id = HostIdentity.of(file);
            SharedArena message = SharedArena.newBuilder().setPath(file.toAbsolutePath().toString())
                    .setDevice(id.device()).setInode(id.inode()).setSizeBytes(id.sizeBytes()).build();
            advert = new ArenaAdvert(file, message);
            return message;
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    /** One arena file and its advert. */
    private record ArenaAdvert(Path file, SharedArena message) {}

    private void release(BoundedMessage<ReleaseRequest> in, StreamObserver<ReleaseResponse> out) {
        out.onNext(release(in, PeerIdentity.current()));
        out.onCompleted();
    }

    ReleaseResponse release(BoundedMessage<ReleaseRequest> in) {
        return release(in, Optional.empty());
    }

    ReleaseResponse release(BoundedMessage<ReleaseRequest> in, Optional<NodeId> peerNodeId) {
        try {
            ReleaseRequest r = parsed(in);
            Incarnation requester = AuthorizeCheck.checkRelease(r, cluster, peerNodeId);
            UUID id = WireCodec.uuid("grant_id", r.hasGrantId(), r.getGrantId());
            return switch (grants.release(requester, id)) {
                case RELEASED -> ReleaseResponse.newBuilder().setStatus(ReleaseStatus.RELEASED).build();
                case UNKNOWN -> ReleaseResponse.newBuilder().setStatus(ReleaseStatus.GRANT_UNKNOWN)
                        .setDetail("no active grant " + id).build();
                case NOT_OWNER -> ReleaseResponse.newBuilder().setStatus(ReleaseStatus.RELEASE_REFUSED)
                        .setDetail("grant " + id + " belongs to another requester").build();
            };
        } catch (WireException e) {
            return ReleaseResponse.newBuilder().setStatus(ReleaseStatus.RELEASE_REFUSED)
                    .setDetail(WireCodec.detail(e.reason() + ": " + e.getMessage())).build();
        }
    }

    private static <T> T parsed(BoundedMessage<T> in) throws WireException {
        return switch (in) {
            case BoundedMessage.Parsed<T> p -> p.message();
            case BoundedMessage.Oversized<T> o -> throw new WireException(RefusalReason.REQUEST_TOO_LARGE,
                    "request of " + o.encodedBytes() + " bytes exceeds authorizeRequestBytesMax " + o.boundBytes());
            case BoundedMessage.Unparseable<T> u -> throw new WireException(RefusalReason.MALFORMED_REQUEST,
                    "unparseable request: " + u.detail());
        };
    }
}
