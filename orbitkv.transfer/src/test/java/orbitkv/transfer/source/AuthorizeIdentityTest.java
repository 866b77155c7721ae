package orbitkv.transfer.source;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import orbitkv.membership.NodeId;
import orbitkv.transfer.NativeIo;
import orbitkv.transfer.TransferFixture;
import orbitkv.transfer.frame.BoundedMessage;
import orbitkv.transfer.frame.DataFrames;
import orbitkv.transfer.frame.WireCodec;
import orbitkv.transfer.wire.AuthorizeRequest;
import orbitkv.transfer.wire.AuthorizeResponse;
import orbitkv.transfer.wire.Intent;
import orbitkv.transfer.wire.RefusalReason;
import orbitkv.transfer.wire.ReleaseRequest;
import orbitkv.transfer.wire.ReleaseResponse;
import orbitkv.transfer.wire.ReleaseStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 33: under peer mutual TLS the node id the caller's certificate names (the peer listener's
 * {@code PeerIdentity} context) must be the requester's; Authorize and Release claiming another member are refused
 * by name and take no pin. The listener side (the context is set from the certificate) is PeerListenerTest's and
 * ManagerSecurityGateTest's.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AuthorizeIdentityTest {
    private TransferFixture f;
    private long seq;

    @BeforeEach
    void start() throws IOException {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()));
        seq = f.payloads.putDram(TransferFixture.key(1), TransferFixture.payload(1000, 1, 1));
    }

    @AfterEach
    void stop() throws IOException {
        f.close();
    }

    private AuthorizeRequest request() {
        AuthorizeRequest.Builder b = AuthorizeRequest.newBuilder().setProtocol(WireCodec.PROTOCOL)
                .setClusterUuid(WireCodec.uuid(f.cluster.uuid()))
                .setRequester(WireCodec.incarnation(f.requesterIncarnation))
                .setSource(WireCodec.incarnation(f.sourceIncarnation)).setIntent(Intent.INTENT_FOREGROUND);
        b.addBlocksBuilder().setNamespace(ByteString.copyFrom(TransferFixture.NS.bytes()))
                .setKey(ByteString.copyFrom(TransferFixture.key(1).key())).setMedium(orbitkv.transfer.wire.Medium.MEDIUM_DRAM)
                .setResidencySequence(seq);
        return b.build();
    }

    @Test
    @DisplayName("issue 33 any certificate from the cluster CA can pose as any member: Authorize naming another node than the caller's certificate is REQUESTER_IDENTITY_MISMATCH, pins nothing and carries no load")
    void authorizeRefusesAnotherMembersIdentity() {
        AuthorizationService service = f.source.service();
        AuthorizeResponse posed = service.authorize(new BoundedMessage.Parsed<>(request()),
                Optional.of(new NodeId("intruder-c")));
        assertThat(posed.getRefused().getReason()).isEqualTo(RefusalReason.REQUESTER_IDENTITY_MISMATCH);
        assertThat(posed.getRefused().getDetail()).contains("requester-b").contains("intruder-c");
        assertThat(posed.hasLoad()).isFalse();
        assertThat(f.source.status().pinsHeld()).isZero();
        assertThat(f.source.status().refusals())
                .containsEntry(orbitkv.transfer.RefusalReason.REQUESTER_IDENTITY_MISMATCH, 1L);

        AuthorizeResponse own = service.authorize(new BoundedMessage.Parsed<>(request()),
                Optional.of(f.requesterIncarnation.nodeId()));
        assertThat(own.hasAuthorized()).as("the certificate's own node is served").isTrue();
        assertThat(own.getAuthorized().getGrantSecret().size()).isEqualTo(DataFrames.SECRET_BYTES);

        ReleaseRequest release = ReleaseRequest.newBuilder().setProtocol(WireCodec.PROTOCOL)
                .setClusterUuid(WireCodec.uuid(f.cluster.uuid())).setRequester(WireCodec.incarnation(f.requesterIncarnation))
                .setGrantId(own.getAuthorized().getGrantId()).build();
        ReleaseResponse refused = service.release(new BoundedMessage.Parsed<>(release), Optional.of(new NodeId("intruder-c")));
        assertThat(refused.getStatus()).isEqualTo(ReleaseStatus.RELEASE_REFUSED);
        assertThat(refused.getDetail()).contains("REQUESTER_IDENTITY_MISMATCH");
        assertThat(f.source.status().grantsOutstanding()).as("another member cannot end the grant").isEqualTo(1);
        assertThat(service.release(new BoundedMessage.Parsed<>(release), Optional.of(f.requesterIncarnation.nodeId()))
                .getStatus()).isEqualTo(ReleaseStatus.RELEASED);
    }
}
