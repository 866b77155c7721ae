package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import orbitkv.inventory.Medium;
import orbitkv.membership.ClusterIdentity;
import orbitkv.testing.Await;
import orbitkv.transfer.FaultProxy.Fault;
import orbitkv.transfer.frame.DataFrames;
import orbitkv.transfer.frame.DataStatus;
import orbitkv.transfer.requester.GrantSecrets;
import orbitkv.transfer.wire.AuthorizeResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 37 item 5 (docs/transfer.md "Data channel", AUTHORIZE): once a source incarnation's first gRPC grant named
 * its data endpoint, the engine asks it on a data connection, whose answer binds that connection to the grant, so a
 * one-block peer restore costs one data-plane round trip for the Authorize and one for the READ, and no gRPC call.
 * The frame is bounded before the source waits for its body, refused by name, and a source without it is asked over
 * gRPC from then on.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DataChannelAuthorizeTest {
    private TransferFixture f;
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void stop() throws IOException {
        f.close();
        arena.close();
    }

    private BlockRef block(int i, int size) {
        long seq = f.payloads.putDram(TransferFixture.key(i), TransferFixture.payload(size, 1, i));
        return new BlockRef(TransferFixture.key(i), Medium.DRAM, seq);
    }

    private void readAndCheck(Grant g, int i, int size) {
        MemorySegment dst = TransferFixture.destination(arena, size);
        ReadHandle h = f.engine.read(g, 0, Destination.of(dst), BackendPolicy.TCP_ONLY, Duration.ofSeconds(10));
        assertThat(TransferFixture.await(h)).isInstanceOf(ReadResult.Completed.class);
        assertThat(dst.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(TransferFixture.payload(size, 1, i));
        assertThat(TransferFixture.await(f.engine.release(g))).isInstanceOf(ReleaseOutcome.Released.class);
    }

    @Test
    @DisplayName("issue 37 item 5 the first grant of a source incarnation comes over gRPC; the next ones on the data connection, whose READ needs no BIND")
    void laterGrantsComeOnTheDataChannel() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()));
        Grant first = f.grant(List.of(block(1, 5000)));
        readAndCheck(first, 1, 5000);
        assertThat(f.engine.status().authorizesOnDataChannel()).as("nothing known before the first grant").isZero();
        for (int i = 2; i <= 4; i++) {
            Grant g = f.grant(List.of(block(i, 5000)));
            readAndCheck(g, i, 5000);
        }
        TransferEngineStatus s = f.engine.status();
        assertThat(s.authorizesOnDataChannel()).isEqualTo(3);
        assertThat(s.dataChannelAuthorizeFallbacks()).isZero();
        assertThat(f.source.status().dataConnections()).as("one connection carried the AUTHORIZEs and the READs").isEqualTo(1);
        assertThat(f.source.status().dataRefusals().values()).as("no READ was refused (NOT_BOUND)").containsOnly(0L);
        assertThat(s.releasesFolded()).as("each grant ended with its last READ").isEqualTo(4);
        Await.inJvm("pins back to zero", Duration.ofSeconds(10), () -> f.source.status().pinsHeld() == 0);
    }

    @Test
    @DisplayName("issue 37 item 5 with dataChannelAuthorize off (--transfer-data-channel-authorize-disabled) every Authorize goes over gRPC")
    void switchedOffEveryAuthorizeGoesOverGrpc() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect())
                .withConfig(TransferFixture.testConfig().withDataChannelAuthorize(false)));
        for (int i = 1; i <= 3; i++) {
            readAndCheck(f.grant(List.of(block(i, 4000))), i, 4000);
        }
        assertThat(f.engine.status().authorizeGranted()).isEqualTo(3);
        assertThat(f.engine.status().authorizesOnDataChannel()).isZero();
        assertThat(f.engine.status().dataChannelAuthorizeFallbacks()).isZero();
    }

    @Test
    @DisplayName("issue 37 item 5 a source that answers AUTHORIZE with MALFORMED (one without the frame) is asked over gRPC, then and from then on")
    void sourceWithoutTheFrameIsAskedOverGrpc() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()));
        readAndCheck(f.grant(List.of(block(1, 4000))), 1, 4000);
        f.source.refuseDataAuthorizeForTest();
        readAndCheck(f.grant(List.of(block(2, 4000))), 2, 4000);
        readAndCheck(f.grant(List.of(block(3, 4000))), 3, 4000);
        TransferEngineStatus s = f.engine.status();
        assertThat(s.dataChannelAuthorizeFallbacks()).as("asked once on the data channel").isEqualTo(1);
        assertThat(s.authorizesOnDataChannel()).isZero();
        assertThat(s.authorizeGranted()).isEqualTo(3);
        assertThat(f.source.status().dataRefusals()).containsEntry(DataRefusal.MALFORMED, 1L);
    }

    @Test
    @DisplayName("issue 37 item 5 a data connection lost before the Authorize answer: asked again over gRPC with the time left, granted")
    void lostAnswerFallsBackToGrpc() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()).withFaults());
        readAndCheck(f.grant(List.of(block(1, 4000))), 1, 4000);
        f.proxy.arm(Fault.CUT, Duration.ZERO); // the next response (the AUTHORIZE's answer) is cut half way
        Grant g = f.grant(List.of(block(2, 4000)));
        readAndCheck(g, 2, 4000);
        TransferEngineStatus s = f.engine.status();
        assertThat(s.dataChannelAuthorizeFallbacks()).isEqualTo(1);
        assertThat(s.authorizeGranted()).isEqualTo(2);
        assertThat(s.authorizeFailures().values()).as("no Authorize failed").containsOnly(0L);
    }

    /** The payload of a forged answer starts after the 32-byte response header (length at 16, CRC32C at 24). */
    private static final int PAYLOAD_AT = DataFrames.RESPONSE_HEADER_BYTES;

    private static byte[] payloadByteFlipped(byte[] r) {
        r[PAYLOAD_AT + (r.length - PAYLOAD_AT) / 2] ^= 0x5A; // the CRC32C in the header no longer matches
        return r;
    }

    private static byte[] lengthBeyondTheBound(byte[] r) {
        ByteBuffer.wrap(r).putLong(16, Integer.MAX_VALUE); // announced; the real bytes follow
        return r;
    }

    private static byte[] garbageWithItsChecksum(byte[] r) {
        java.util.Arrays.fill(r, PAYLOAD_AT, r.length, (byte) 0xff);
        CRC32C crc = new CRC32C();
        crc.update(r, PAYLOAD_AT, r.length - PAYLOAD_AT);
        ByteBuffer.wrap(r).putInt(24, (int) crc.getValue());
        return r;
    }

    @Test
    @DisplayName("issue 37 item 5 BND-1 a forged AUTHORIZE answer (bad CRC32C, a length beyond its bound, unparseable) closes the connection and is asked over gRPC")
    void forgedAnswersAreRefusedByTheRequester() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()).withFaults());
        readAndCheck(f.grant(List.of(block(1, 4000))), 1, 4000);
        List<java.util.function.UnaryOperator<byte[]>> forgeries = List.of(DataChannelAuthorizeTest::payloadByteFlipped,
                DataChannelAuthorizeTest::lengthBeyondTheBound, DataChannelAuthorizeTest::garbageWithItsChecksum);
        for (int i = 0; i < forgeries.size(); i++) {
            f.proxy.forge(forgeries.get(i)); // the next response: the AUTHORIZE's answer
            Grant g = f.grant(List.of(block(2 + i, 4000)));
            readAndCheck(g, 2 + i, 4000);
            assertThat(f.engine.status().dataChannelAuthorizeFallbacks()).as("forgery " + i + " fell back to gRPC")
                    .isEqualTo(i + 1);
        }
        TransferEngineStatus s = f.engine.status();
        assertThat(s.authorizesOnDataChannel()).as("no forged answer was taken").isZero();
        assertThat(s.authorizeGranted()).isEqualTo(4);
        assertThat(s.readFailures().values()).as("the READs after the fallbacks").containsOnly(0L);
    }

    // ------------------------------------------------------------------ raw frames against the source

    private SocketChannel connect() throws IOException {
        SocketChannel s = SocketChannel.open(new InetSocketAddress("127.0.0.1", f.source.boundDataAddress().getPort()));
        s.socket().setSoTimeout(10_000);
        return s;
    }

    private static void authorize(SocketChannel s, byte[] body, int announced, long requestId) throws IOException {
        ByteBuf b = Unpooled.buffer(DataFrames.REQUEST_BYTES + body.length);
        DataFrames.writeAuthorize(b, announced, requestId);
        b.writeBytes(body);
        s.write(b.nioBuffer());
    }

    private static byte[] readFully(SocketChannel s, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (s.read(b) < 0) {
                throw new IOException("closed after " + b.position() + " of " + n + " bytes");
            }
        }
        return b.array();
    }

    /** The answer to an AUTHORIZE: its header checked (OK, the request id, the CRC32C of the bytes), parsed. */
    private static AuthorizeResponse answer(SocketChannel s, long requestId) throws Exception {
        DataFrames.ResponseHeader h = DataFrames.readResponseHeader(readFully(s, DataFrames.RESPONSE_HEADER_BYTES));
        assertThat(h.status()).isEqualTo(DataStatus.OK);
        assertThat(h.readId()).isEqualTo(requestId);
        byte[] bytes = readFully(s, (int) h.length());
        CRC32C crc = new CRC32C();
        crc.update(bytes);
        assertThat((int) crc.getValue()).as("the answer's CRC32C").isEqualTo(h.crc32c());
        return AuthorizeResponse.parseFrom(bytes);
    }

    private byte[] request(ClusterIdentity cluster, BlockRef... blocks) {
        return GrantSecrets.authorizeRequest(f.request(Intent.FOREGROUND, List.of(blocks)), f.requesterIncarnation, cluster);
    }

    private static UUID grantId(AuthorizeResponse r) {
        return new UUID(r.getAuthorized().getGrantId().getMsb(), r.getAuthorized().getGrantId().getLsb());
    }

    private static void read(SocketChannel s, UUID grant, int index, long readId) throws IOException {
        ByteBuf b = Unpooled.buffer(DataFrames.REQUEST_BYTES);
        DataFrames.writeRequest(b, grant, index, readId);
        s.write(b.nioBuffer());
    }

    private static boolean closedByPeer(SocketChannel s) throws IOException {
        return s.read(ByteBuffer.allocate(1)) == -1;
    }

    @Test
    @DisplayName("issue 37 item 5 a granted AUTHORIZE binds its connection: a READ pipelined right behind it (same write) is served; another grant's READ there is NOT_BOUND")
    void grantedAuthorizeBindsItsConnection() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()));
        Grant other = f.grant(List.of(block(9, 3000)));
        try (SocketChannel s = connect()) {
            byte[] body = request(f.cluster, block(1, 5000));
            ByteBuf b = Unpooled.buffer(DataFrames.REQUEST_BYTES + body.length);
            DataFrames.writeAuthorize(b, body.length, 11);
            b.writeBytes(body);
            s.write(b.nioBuffer());
            AuthorizeResponse r = answer(s, 11);
            assertThat(r.hasAuthorized()).isTrue();
            assertThat(r.getAuthorized().getGrantSecret().size()).isEqualTo(DataFrames.SECRET_BYTES);
            read(s, grantId(r), 0, 12);
            DataFrames.ResponseHeader h = DataFrames.readResponseHeader(readFully(s, DataFrames.RESPONSE_HEADER_BYTES));
            assertThat(h.status()).isEqualTo(DataStatus.OK);
            assertThat(readFully(s, (int) h.length())).isEqualTo(TransferFixture.payload(5000, 1, 1));
            read(s, other.id(), 0, 13);
            h = DataFrames.readResponseHeader(readFully(s, DataFrames.RESPONSE_HEADER_BYTES));
            assertThat(h.status()).as("bound to the AUTHORIZE's grant only").isEqualTo(DataStatus.NOT_BOUND);
        }
    }

    @Test
    @DisplayName("issue 37 item 5 BND-1 an AUTHORIZE announcing more than authorizeRequestBytesMax is answered REQUEST_TOO_LARGE before its body is read, and the connection closes; nothing is pinned")
    void oversizedAuthorizeIsRefusedBeforeItsBody() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()));
        try (SocketChannel s = connect()) {
            authorize(s, new byte[0], f.config.authorizeRequestBytesMax() + 1, 21);
            AuthorizeResponse r = answer(s, 21);
            assertThat(r.getRefused().getReason()).isEqualTo(orbitkv.transfer.wire.RefusalReason.REQUEST_TOO_LARGE);
            assertThat(closedByPeer(s)).isTrue();
        }
        try (SocketChannel s = connect()) { // 2^32 - 1 announced: the unsigned length is bounded, not wrapped
            ByteBuf b = Unpooled.buffer(DataFrames.REQUEST_BYTES);
            DataFrames.writeAuthorize(b, 0, 22);
            b.setInt(DataFrames.AUTHORIZE_LENGTH_OFFSET, -1);
            s.write(b.nioBuffer());
            assertThat(answer(s, 22).getRefused().getReason()).isEqualTo(orbitkv.transfer.wire.RefusalReason.REQUEST_TOO_LARGE);
            assertThat(closedByPeer(s)).isTrue();
        }
        assertThat(f.source.status().pinsHeld()).isZero();
        assertThat(f.source.status().grantsOutstanding()).isZero();
    }

    @Test
    @DisplayName("issue 37 item 5 an unparseable body and a wrong cluster are refused by name in the answer; the connection stays open and unbound")
    void badRequestsAreRefusedByName() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()));
        try (SocketChannel s = connect()) {
            byte[] garbage = {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x01};
            authorize(s, garbage, garbage.length, 31);
            assertThat(answer(s, 31).getRefused().getReason()).isEqualTo(orbitkv.transfer.wire.RefusalReason.MALFORMED_REQUEST);
            byte[] wrongCluster = request(new ClusterIdentity("transfer-test", UUID.randomUUID()), block(1, 100));
            authorize(s, wrongCluster, wrongCluster.length, 32);
            assertThat(answer(s, 32).getRefused().getReason()).isEqualTo(orbitkv.transfer.wire.RefusalReason.CLUSTER_MISMATCH);
            byte[] good = request(f.cluster, block(2, 100));
            authorize(s, good, good.length, 33);
            assertThat(answer(s, 33).hasAuthorized()).as("the connection still serves").isTrue();
        }
        assertThat(f.source.status().refusals()).containsEntry(RefusalReason.MALFORMED_REQUEST, 1L)
                .containsEntry(RefusalReason.CLUSTER_MISMATCH, 1L);
    }
}
