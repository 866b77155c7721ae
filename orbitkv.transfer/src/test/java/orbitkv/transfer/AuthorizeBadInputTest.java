package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.UUID;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.transfer.frame.WireCodec;
import orbitkv.transfer.wire.AuthorizeRequest;
import orbitkv.transfer.wire.AuthorizeResponse;
import orbitkv.transfer.wire.IncarnationRef;
import orbitkv.transfer.wire.Intent;
import orbitkv.transfer.wire.ReleaseRequest;
import orbitkv.transfer.wire.ReleaseResponse;
import orbitkv.transfer.wire.ReleaseStatus;
import orbitkv.transfer.wire.TransferAuthorizationGrpc;
import orbitkv.transfer.wire.Uuid;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad input to the authorization service, forged with the generated wire classes and sent over a real gRPC
 * channel (INV-2, INV-10, BND-1): every row is a named request-level refusal, and no row takes a pin or leaves a
 * grant behind.
 */
@Tag("unit")
class AuthorizeBadInputTest {
    private static TransferFixture f;
    private static long seq;

    @BeforeAll
    static void start() throws IOException {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()));
        seq = f.payloads.putDram(TransferFixture.key(1), TransferFixture.payload(1000, 1, 1));
        f.payloads.putDram(TransferFixture.key(2), TransferFixture.payload(1000, 1, 2));
    }

    @AfterAll
    static void stop() throws IOException {
        f.close();
    }

    private static AuthorizeRequest.Builder valid() {
        AuthorizeRequest.Builder b = AuthorizeRequest.newBuilder().setProtocol(WireCodec.PROTOCOL)
                .setClusterUuid(WireCodec.uuid(f.cluster.uuid()))
                .setRequester(WireCodec.incarnation(f.requesterIncarnation))
                .setSource(WireCodec.incarnation(f.sourceIncarnation)).setIntent(Intent.INTENT_FOREGROUND);
        b.addBlocksBuilder().setNamespace(ByteString.copyFrom(TransferFixture.NS.bytes()))
                .setKey(ByteString.copyFrom(TransferFixture.key(1).key())).setMedium(orbitkv.transfer.wire.Medium.MEDIUM_DRAM)
                .setResidencySequence(seq);
        return b;
    }

    private static Arguments row(String name, RefusalReason expected, UnaryOperator<AuthorizeRequest.Builder> forge) {
        return Arguments.of(name, expected, forge);
    }

    private static IncarnationRef ref(Incarnation i) {
        return WireCodec.incarnation(i);
    }

    static Stream<Arguments> rows() {
        Incarnation src = f.sourceIncarnation;
        return Stream.of(
                row("protocol v0", RefusalReason.PROTOCOL_MISMATCH, b -> b.setProtocol("orbitkv/transfer/v0")),
                row("inventory protocol string", RefusalReason.PROTOCOL_MISMATCH, b -> b.setProtocol("orbitkv/inventory-stream/v4")),
                row("forged cluster UUID", RefusalReason.CLUSTER_MISMATCH, b -> b.setClusterUuid(WireCodec.uuid(UUID.randomUUID()))),
                row("cluster UUID missing", RefusalReason.MALFORMED_REQUEST, b -> b.clearClusterUuid()),
                row("stale source incarnation (older epoch)", RefusalReason.STALE_SOURCE_INCARNATION,
                        b -> b.setSource(ref(new Incarnation(src.nodeId(), new NodeEpoch(2), UUID.randomUUID())))),
                row("same epoch, another random id", RefusalReason.STALE_SOURCE_INCARNATION,
                        b -> b.setSource(ref(new Incarnation(src.nodeId(), src.epoch(), UUID.randomUUID())))),
                row("newer epoch of the source node", RefusalReason.WRONG_SOURCE_INCARNATION,
                        b -> b.setSource(ref(new Incarnation(src.nodeId(), new NodeEpoch(4), UUID.randomUUID())))),
                row("another node as source", RefusalReason.WRONG_SOURCE_INCARNATION,
                        b -> b.setSource(ref(Incarnation.random(new NodeId("other"), new NodeEpoch(1))))),
                row("requester not admitted", RefusalReason.REQUESTER_NOT_ADMITTED,
                        b -> b.setRequester(ref(Incarnation.random(new NodeId("requester-b"), new NodeEpoch(4))))),
                row("requester missing", RefusalReason.MALFORMED_REQUEST, b -> b.clearRequester()),
                row("requester epoch 0", RefusalReason.MALFORMED_REQUEST, b -> b.setRequester(b.getRequester().toBuilder().setNodeEpoch(0))),
                row("requester epoch overflows (2^64-1)", RefusalReason.MALFORMED_REQUEST,
                        b -> b.setRequester(b.getRequester().toBuilder().setNodeEpoch(-1L))),
                row("requester node id with '/'", RefusalReason.MALFORMED_REQUEST,
                        b -> b.setRequester(b.getRequester().toBuilder().setNodeId("a/b"))),
                row("intent unspecified", RefusalReason.UNKNOWN_ENUM_VALUE, b -> b.setIntentValue(0)),
                row("intent 9 (unknown)", RefusalReason.UNKNOWN_ENUM_VALUE, b -> b.setIntentValue(9)),
                row("medium 7 (unknown)", RefusalReason.UNKNOWN_ENUM_VALUE, b -> b.setBlocks(0, b.getBlocks(0).toBuilder().setMediumValue(7))),
                row("medium unspecified", RefusalReason.UNKNOWN_ENUM_VALUE, b -> b.setBlocks(0, b.getBlocks(0).toBuilder().setMediumValue(0))),
                row("no blocks", RefusalReason.MALFORMED_REQUEST, b -> b.clearBlocks()),
                row("129 blocks", RefusalReason.TOO_MANY_KEYS, b -> {
                    for (int i = 0; i < 128; i++) {
                        b.addBlocks(b.getBlocks(0).toBuilder().setKey(ByteString.copyFrom(TransferFixture.key(1000 + i).key())));
                    }
                    return b;
                }),
                row("duplicate key, other sequence", RefusalReason.DUPLICATE_KEY,
                        b -> b.addBlocks(b.getBlocks(0).toBuilder().setResidencySequence(seq + 100))),
                row("empty namespace", RefusalReason.MALFORMED_REQUEST, b -> b.setBlocks(0, b.getBlocks(0).toBuilder().setNamespace(ByteString.EMPTY))),
                row("256-byte namespace", RefusalReason.MALFORMED_REQUEST,
                        b -> b.setBlocks(0, b.getBlocks(0).toBuilder().setNamespace(ByteString.copyFrom(new byte[256])))),
                row("65-byte key", RefusalReason.MALFORMED_REQUEST, b -> b.setBlocks(0, b.getBlocks(0).toBuilder().setKey(ByteString.copyFrom(new byte[65])))),
                row("residency sequence 0", RefusalReason.MALFORMED_REQUEST, b -> b.setBlocks(0, b.getBlocks(0).toBuilder().setResidencySequence(0))),
                row("residency sequence overflows", RefusalReason.MALFORMED_REQUEST,
                        b -> b.setBlocks(0, b.getBlocks(0).toBuilder().setResidencySequence(Long.MIN_VALUE))),
                row("5-byte boot id", RefusalReason.MALFORMED_REQUEST, b -> b.setRequesterBootId(ByteString.copyFrom(new byte[5]))),
                row("100 KiB request", RefusalReason.REQUEST_TOO_LARGE,
                        b -> b.setProtocol("x".repeat(100 << 10))));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @MethodSource("rows")
    @DisplayName("INV-2 BND-1 a bad Authorize is a named refusal and takes no pin")
    void badInput(String name, RefusalReason expected, UnaryOperator<AuthorizeRequest.Builder> forge) {
        long before = f.source.status().refusals().get(expected);
        AuthorizeResponse r = authorize(forge.apply(valid()).build().toByteArray());
        assertThat(r.hasRefused()).as(name).isTrue();
        assertThat(WireCodec.reason(r.getRefused().getReason())).as(name).isEqualTo(expected);
        assertThat(r.getRefused().getDetail()).isNotBlank();
        assertThat(r.hasLoad()).as(name + ": a load summary rides on this refusal (ROUTE-9)")
                .isEqualTo(!LoadSummaryTest.REFUSALS_WITHOUT_LOAD.contains(expected));
        assertNoState();
        assertThat(f.source.status().refusals().get(expected)).isEqualTo(before + 1);
    }

    @Test
    @DisplayName("BND-1 bytes that are not an AuthorizeRequest are MALFORMED_REQUEST, no pin")
    void unparseable() {
        AuthorizeResponse r = authorize(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f, 0x01});
        assertThat(WireCodec.reason(r.getRefused().getReason())).isEqualTo(RefusalReason.MALFORMED_REQUEST);
        assertNoState();
    }

    @Test
    @DisplayName("the valid base request is granted (the rows change one field each), and the same key in two media is no duplicate")
    void validBaseIsGranted() {
        AuthorizeResponse r = authorize(valid().addBlocks(valid().getBlocks(0).toBuilder()
                .setMedium(orbitkv.transfer.wire.Medium.MEDIUM_SSD)).build().toByteArray());
        assertThat(r.hasAuthorized()).isTrue();
        assertThat(r.getAuthorized().getBlocks(0).hasGranted()).isTrue();
        assertThat(r.getAuthorized().getBlocks(1).getRefused().getReason())
                .isEqualTo(orbitkv.transfer.wire.RefusalReason.NOT_RESIDENT);
        assertThat(f.source.status().pinsHeld()).isEqualTo(1);
        ReleaseResponse rel = release(ReleaseRequest.newBuilder().setProtocol(WireCodec.PROTOCOL)
                .setClusterUuid(WireCodec.uuid(f.cluster.uuid())).setRequester(ref(f.requesterIncarnation))
                .setGrantId(r.getAuthorized().getGrantId()).build());
        assertThat(rel.getStatus()).isEqualTo(ReleaseStatus.RELEASED);
        assertNoState();
    }

    @Test
    @DisplayName("INV-9 Release by another requester, with a forged cluster or for an unknown grant changes nothing")
    void badRelease() {
        AuthorizeResponse r = authorize(valid().build().toByteArray());
        Uuid id = r.getAuthorized().getGrantId();
        ReleaseRequest ok = ReleaseRequest.newBuilder().setProtocol(WireCodec.PROTOCOL)
                .setClusterUuid(WireCodec.uuid(f.cluster.uuid())).setRequester(ref(f.requesterIncarnation)).setGrantId(id).build();
        assertThat(release(ok.toBuilder().setRequester(ref(Incarnation.random(new NodeId("x"), new NodeEpoch(1)))).build())
                .getStatus()).isEqualTo(ReleaseStatus.RELEASE_REFUSED);
        assertThat(release(ok.toBuilder().setClusterUuid(WireCodec.uuid(UUID.randomUUID())).build()).getStatus())
                .isEqualTo(ReleaseStatus.RELEASE_REFUSED);
        assertThat(release(ok.toBuilder().setGrantId(WireCodec.uuid(UUID.randomUUID())).build()).getStatus())
                .isEqualTo(ReleaseStatus.GRANT_UNKNOWN);
        assertThat(f.source.status().pinsHeld()).as("the grant survives bad releases").isEqualTo(1);
        assertThat(release(ok).getStatus()).isEqualTo(ReleaseStatus.RELEASED);
        assertThat(release(ok).getStatus()).as("twice").isEqualTo(ReleaseStatus.GRANT_UNKNOWN);
        assertNoState();
    }

    @Test
    @DisplayName("INV-10 MEM-9 while the source's view is suspended every Authorize is MEMBERSHIP_SUSPENDED, no pin")
    void suspendedMembership() {
        f.membership.set(false);
        try {
            AuthorizeResponse r = authorize(valid().build().toByteArray());
            assertThat(WireCodec.reason(r.getRefused().getReason())).isEqualTo(RefusalReason.MEMBERSHIP_SUSPENDED);
            assertNoState();
        } finally {
            f.membership.set(true, f.sourceIncarnation, f.requesterIncarnation);
        }
    }

    private static void assertNoState() {
        TransferSourceStatus s = f.source.status();
        assertThat(s.pinsHeld()).as("pins").isZero();
        assertThat(s.pinnedBytesHeld()).isZero();
        assertThat(s.grantsOutstanding()).as("grants").isZero();
        assertThat(f.payloads.pinsHeld()).as("payload owner's pins").isZero();
    }

    private static final MethodDescriptor.Marshaller<byte[]> RAW = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream in) {
            try {
                return in.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    /** Sends raw bytes as an Authorize request (so malformed encodings can be sent too). */
    private static AuthorizeResponse authorize(byte[] request) {
        MethodDescriptor<byte[], byte[]> m = TransferAuthorizationGrpc.getAuthorizeMethod().toBuilder(RAW, RAW).build();
        byte[] answer = ClientCalls.blockingUnaryCall(f.channel, m,
                CallOptions.DEFAULT.withDeadlineAfter(10, java.util.concurrent.TimeUnit.SECONDS), request);
        try {
            return AuthorizeResponse.parseFrom(answer);
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }

    private static ReleaseResponse release(ReleaseRequest r) {
        return TransferAuthorizationGrpc.newBlockingStub(f.channel)
                .withDeadlineAfter(10, java.util.concurrent.TimeUnit.SECONDS).release(r);
    }

}
