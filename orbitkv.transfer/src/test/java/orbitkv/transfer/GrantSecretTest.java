package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.Medium;
import orbitkv.transfer.frame.DataFrames;
import orbitkv.transfer.frame.DataStatus;
import orbitkv.transfer.requester.GrantSecrets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 33 (docs/transfer.md "Data channel", BIND): without TLS a grant is bound to the data connection by a
 * per-grant secret that only the Authorize answer carries, so a grant id seen on the wire reads nothing.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GrantSecretTest {
    private TransferFixture f;

    @AfterEach
    void stop() throws IOException {
        f.close();
    }

    private SocketChannel connect() throws IOException {
        SocketChannel s = SocketChannel.open(new InetSocketAddress("127.0.0.1", f.source.boundDataAddress().getPort()));
        s.socket().setSoTimeout(10_000);
        return s;
    }

    private static void read(SocketChannel s, Grant g, int index, long readId) throws IOException {
        ByteBuf b = Unpooled.buffer(DataFrames.REQUEST_BYTES);
        DataFrames.writeRequest(b, g.id(), index, readId);
        s.write(b.nioBuffer());
    }

    private static void bind(SocketChannel s, Grant g, byte[] secret) throws IOException {
        ByteBuf b = Unpooled.buffer(DataFrames.REQUEST_BYTES);
        DataFrames.writeBind(b, g.id(), secret);
        s.write(b.nioBuffer());
    }

    private static DataFrames.ResponseHeader header(SocketChannel s) throws Exception {
        ByteBuffer h = ByteBuffer.allocate(DataFrames.RESPONSE_HEADER_BYTES);
        while (h.hasRemaining()) {
            if (s.read(h) < 0) {
                throw new IOException("closed");
            }
        }
        return DataFrames.readResponseHeader(h.array());
    }

    private static boolean closedByPeer(SocketChannel s) throws IOException {
        return s.read(ByteBuffer.allocate(1)) == -1;
    }

    private Grant grant(int i) {
        long seq = f.payloads.putDram(TransferFixture.key(i), TransferFixture.payload(5000, 1, i));
        return f.grant(List.of(new BlockRef(TransferFixture.key(i), Medium.DRAM, seq)));
    }

    @Test
    @DisplayName("issue 33 a sniffed grant id alone does not read bytes: a READ on a connection not bound to its grant is NOT_BOUND; the BIND with the grant's secret serves it")
    void sniffedGrantIdAloneDoesNotReadBytes() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()));
        Grant g = grant(1);
        try (SocketChannel sniffer = connect()) {
            read(sniffer, g, 0, 1);
            DataFrames.ResponseHeader h = header(sniffer);
            assertThat(h.status()).as("the grant id alone").isEqualTo(DataStatus.NOT_BOUND);
            assertThat(h.length()).isZero();
        }
        assertThat(f.source.status().dataRefusals()).containsEntry(DataRefusal.NOT_BOUND, 1L);
        try (SocketChannel owner = connect()) {
            owner.write(GrantSecrets.bindFrame(g));
            read(owner, g, 0, 2);
            DataFrames.ResponseHeader h = header(owner);
            assertThat(h.status()).as("the block was not spent by the refused READ").isEqualTo(DataStatus.OK);
            assertThat(h.readId()).isEqualTo(2);
            assertThat(h.length()).isEqualTo(5000);
        }
    }

    @Test
    @DisplayName("issue 33 a BIND with a wrong secret is answered BAD_SECRET (read id 0) and the connection closes; READs pipelined behind it are not served")
    void wrongSecretClosesTheConnection() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()));
        Grant g = grant(1);
        byte[] wrong = GrantSecrets.secret(g);
        wrong[7] ^= 1;
        try (SocketChannel s = connect()) {
            ByteBuf b = Unpooled.buffer(2 * DataFrames.REQUEST_BYTES);
            DataFrames.writeBind(b, g.id(), wrong);
            DataFrames.writeRequest(b, g.id(), 0, 1);
            s.write(b.nioBuffer()); // one segment: the READ is decoded with the BIND
            DataFrames.ResponseHeader h = header(s);
            assertThat(h.status()).isEqualTo(DataStatus.BAD_SECRET);
            assertThat(h.readId()).isZero();
            assertThat(closedByPeer(s)).as("closed after a wrong secret, nothing else answered").isTrue();
        }
        assertThat(f.source.status().dataRefusals()).containsEntry(DataRefusal.BAD_SECRET, 1L);
        assertThat(f.source.status().readsServed().getOrDefault(PeerRouteClass.PEER_DRAM, 0L)).isZero();
    }

    @Test
    @DisplayName("issue 33 BND-1 a BIND and a READ split across socket reads are served (the bounded listener asks again after a read cycle that brought no whole frame; DataChannelTlsTest covers the TLS case, where handshake reads end such cycles)")
    void frameSplitAcrossSocketReadsIsServed() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()));
        Grant g = grant(1);
        try (SocketChannel s = connect()) {
            s.socket().setTcpNoDelay(true);
            ByteBuf b = Unpooled.buffer(2 * DataFrames.REQUEST_BYTES);
            DataFrames.writeBind(b, g.id(), GrantSecrets.secret(g));
            DataFrames.writeRequest(b, g.id(), 0, 7);
            byte[] all = new byte[b.readableBytes()];
            b.readBytes(all);
            int cut = DataFrames.REQUEST_BYTES + 13; // mid-READ
            s.write(ByteBuffer.wrap(all, 0, cut));
            Thread.sleep(100); // not synchronization: makes the two halves arrive in separate socket reads
            s.write(ByteBuffer.wrap(all, cut, all.length - cut));
            DataFrames.ResponseHeader h = header(s);
            assertThat(h.status()).isEqualTo(DataStatus.OK);
            assertThat(h.readId()).isEqualTo(7);
        }
    }

    @Test
    @DisplayName("issue 33 a connection bound to one grant does not READ another (its secret was not shown); a new BIND rebinds it")
    void bindingIsPerGrant() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()));
        Grant mine = grant(1);
        Grant theirs = grant(2);
        assertThat(GrantSecrets.secret(mine)).hasSize(DataFrames.SECRET_BYTES);
        assertThat(Arrays.equals(GrantSecrets.secret(mine), GrantSecrets.secret(theirs))).as("fresh random per grant").isFalse();
        try (SocketChannel s = connect()) {
            s.write(GrantSecrets.bindFrame(mine));
            read(s, theirs, 0, 1);
            assertThat(header(s).status()).isEqualTo(DataStatus.NOT_BOUND);
            bind(s, theirs, GrantSecrets.secret(theirs));
            read(s, theirs, 0, 2);
            assertThat(header(s).status()).isEqualTo(DataStatus.OK);
        }
    }
}
