package orbitkv.conformance.kit;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.transfer.wire.AuthorizeRequest;
import orbitkv.transfer.wire.AuthorizeResponse;
import orbitkv.transfer.wire.BlockRef;
import orbitkv.transfer.wire.IncarnationRef;
import orbitkv.transfer.wire.Intent;
import orbitkv.transfer.wire.Medium;
import orbitkv.transfer.wire.ReleaseRequest;
import orbitkv.transfer.wire.ReleaseResponse;
import orbitkv.transfer.wire.TransferAuthorizationGrpc;

/**
 * One transfer row's calls to the target's authorization service {@code orbitkv.transfer.v1.TransferAuthorization}
 * on its peer listener (docs/transfer.md), speaking as kit members. Plaintext: one channel; under peer mutual TLS
 * one channel per kit node id, presenting that node's certificate (the target refuses an Authorize or Release that
 * names another node than the certificate, issue 33). At most {@link KitMembers#MEMBERS_MAX} channels; every call
 * has a deadline of the row's remaining time cut to {@code --wait-ms}.
 */
@SuppressWarnings("try") // close() waits for the channels to terminate, so it may be interrupted
final class TransferCalls implements AutoCloseable {
    /** The protocol string of orbitkv.transfer.v1. */
    static final String PROTOCOL = "orbitkv/transfer/v1";

    private final Endpoint target;
    private final Optional<KitPeerTls> tls;
    private final Map<String, ManagedChannel> open = new LinkedHashMap<>();
    private boolean closed;

    TransferCalls(Endpoint target, Optional<KitPeerTls> tls) {
        this.target = target;
        this.tls = tls;
    }

    /** Authorize as {@code requester} (the channel presents its certificate under TLS). */
    AuthorizeResponse authorize(AuthorizeRequest request, Duration bound) {
        return TransferAuthorizationGrpc.newBlockingStub(channel(request.getRequester().getNodeId()))
                .withDeadlineAfter(bound.toMillis(), TimeUnit.MILLISECONDS).authorize(request);
    }

    /** Release {@code grant} as {@code requester}. */
    ReleaseResponse release(UUID clusterUuid, Incarnation requester, UUID grant, Duration bound) {
        ReleaseRequest r = ReleaseRequest.newBuilder().setProtocol(PROTOCOL).setClusterUuid(uuid(clusterUuid))
                .setRequester(ref(requester)).setGrantId(uuid(grant)).build();
        return TransferAuthorizationGrpc.newBlockingStub(channel(requester.nodeId().value()))
                .withDeadlineAfter(bound.toMillis(), TimeUnit.MILLISECONDS).release(r);
    }

    /** A well-formed foreground request for {@code blocks}, which a row then breaks in one field. */
    static AuthorizeRequest.Builder request(UUID clusterUuid, Incarnation requester, Incarnation source, List<BlockRef> blocks) {
        return AuthorizeRequest.newBuilder().setProtocol(PROTOCOL).setClusterUuid(uuid(clusterUuid))
                .setRequester(ref(requester)).setSource(ref(source)).setIntent(Intent.INTENT_FOREGROUND).addAllBlocks(blocks);
    }

    /** A DRAM block reference. */
    static BlockRef block(String namespace, byte[] key, long residencySequence) {
        return BlockRef.newBuilder().setNamespace(ByteString.copyFromUtf8(namespace)).setKey(ByteString.copyFrom(key))
                .setMedium(Medium.MEDIUM_DRAM).setResidencySequence(residencySequence).build();
    }

    static orbitkv.transfer.wire.Uuid uuid(UUID u) {
        return orbitkv.transfer.wire.Uuid.newBuilder().setMsb(u.getMostSignificantBits()).setLsb(u.getLeastSignificantBits()).build();
    }

    static UUID uuid(orbitkv.transfer.wire.Uuid u) {
        return new UUID(u.getMsb(), u.getLsb());
    }

    static IncarnationRef ref(Incarnation i) {
        return IncarnationRef.newBuilder().setNodeId(i.nodeId().value()).setNodeEpoch(i.epoch().value())
                .setId(uuid(i.id())).build();
    }

    private synchronized ManagedChannel channel(String node) {
        if (closed) {
            throw new IllegalStateException("the row's transfer channels are closed (its deadline passed)");
        }
        String key = tls.isPresent() ? node : "";
        ManagedChannel c = open.get(key);
        if (c == null) {
            if (open.size() >= KitMembers.MEMBERS_MAX) {
                throw new IllegalStateException("a transfer row speaks as more than " + KitMembers.MEMBERS_MAX + " kit nodes");
            }
            NettyChannelBuilder b = NettyChannelBuilder.forAddress(target.host(), target.port());
            if (tls.isPresent()) {
                var files = tls.get().files(node);
                try {
                    b.sslContext(GrpcSslContexts.forClient().trustManager(files.caFile().toFile())
                            .keyManager(files.certFile().toFile(), files.keyFile().toFile()).build());
                } catch (SSLException e) {
                    throw new IllegalStateException("peer TLS files of kit member " + node + ": " + e.getMessage(), e);
                }
            } else {
                b.usePlaintext();
            }
            c = b.build();
            open.put(key, c);
        }
        return c;
    }

    /** Ends every channel (idempotent), so every call of the row returns. */
    @Override
    public void close() throws InterruptedException {
        List<ManagedChannel> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(open.values());
            open.clear();
        }
        for (ManagedChannel c : all) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
