package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.Medium;
import orbitkv.testing.Await;
import orbitkv.transfer.frame.DataFrames;
import orbitkv.transfer.frame.DataStatus;
import orbitkv.transfer.requester.GrantSecrets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The data listener against a raw loopback socket (docs/transfer.md "Data channel"): bad frames and unknown
 * grants are named statuses, a block is sent once per grant, and the source egress cap refuses a READ while
 * another's bytes are still in flight (a requester that does not read holds them).
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DataChannelTest {
    private TransferFixture f;

    @AfterEach
    void stop() throws IOException {
        f.close();
    }

    private SocketChannel connect() throws IOException {
        InetSocketAddress a = f.source.boundDataAddress();
        SocketChannel s = SocketChannel.open(new InetSocketAddress("127.0.0.1", a.getPort()));
        s.socket().setSoTimeout(10_000);
        return s;
    }

    private static void send(SocketChannel s, UUID grant, int index, long readId) throws IOException {
        io.netty.buffer.ByteBuf b = io.netty.buffer.Unpooled.buffer(DataFrames.REQUEST_BYTES);
        DataFrames.writeRequest(b, grant, index, readId);
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

    private static void skip(SocketChannel s, long n) throws IOException {
        ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
        while (n > 0) {
            b.clear().limit((int) Math.min(b.capacity(), n));
            int r = s.read(b);
            if (r < 0) {
                throw new IOException("closed");
            }
            n -= r;
        }
    }

    @Test
    @DisplayName("BND-1 malformed frame -> MALFORMED and close; unknown grant, bad index, second READ of a block -> named statuses")
    void badRequests() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()));
        long seq = f.payloads.putDram(TransferFixture.key(1), TransferFixture.payload(5000, 1, 1));
        long seq2 = f.payloads.putDram(TransferFixture.key(2), TransferFixture.payload(5000, 1, 2));
        // Two blocks, one left unsent: our engine asks for release-after-last-read (issue 37 item 5), so a grant whose
        // every block was sent has ended and a second READ of it would be GRANT_UNKNOWN, not ALREADY_READ.
        Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, seq),
                new BlockRef(TransferFixture.key(2), Medium.DRAM, seq2)));
        try (SocketChannel s = connect()) {
            send(s, UUID.randomUUID(), 0, 1);
            assertThat(header(s).status()).isEqualTo(DataStatus.GRANT_UNKNOWN);
            s.write(GrantSecrets.bindFrame(g));
            send(s, g.id(), 2, 2);
            assertThat(header(s).status()).isEqualTo(DataStatus.BLOCK_NOT_GRANTED);
            send(s, g.id(), 0, 3);
            DataFrames.ResponseHeader ok = header(s);
            assertThat(ok.status()).isEqualTo(DataStatus.OK);
            assertThat(ok.readId()).isEqualTo(3);
            skip(s, ok.length());
            send(s, g.id(), 0, 4);
            assertThat(header(s).status()).isEqualTo(DataStatus.ALREADY_READ);
            s.write(ByteBuffer.wrap(new byte[DataFrames.REQUEST_BYTES])); // magic 0
            assertThat(header(s).status()).isEqualTo(DataStatus.MALFORMED);
            assertThat(s.read(ByteBuffer.allocate(1))).as("closed after a malformed frame").isEqualTo(-1);
        }
        assertThat(f.source.status().dataRefusals()).containsEntry(DataRefusal.GRANT_UNKNOWN, 1L)
                .containsEntry(DataRefusal.BLOCK_NOT_GRANTED, 1L).containsEntry(DataRefusal.ALREADY_READ, 1L)
                .containsEntry(DataRefusal.MALFORMED, 1L);
    }

    @Test
    @DisplayName("INV-9 the source egress cap: while a READ's bytes are unsent (its reader does not read) another READ is EGRESS_LIMIT")
    void egressLimit() throws Exception {
        int size = 32 << 20;
        TransferConfig c = TransferFixture.testConfig().withWindows(size, size, size, 64, 16);
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()).withConfig(c));
        long a = f.payloads.putDram(TransferFixture.key(1), TransferFixture.payload(size, 1, 1));
        long b = f.payloads.putDram(TransferFixture.key(2), TransferFixture.payload(size, 1, 2));
        Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, a),
                new BlockRef(TransferFixture.key(2), Medium.DRAM, b)));
        try (SocketChannel slow = connect(); SocketChannel other = connect()) {
            slow.write(GrantSecrets.bindFrame(g));
            other.write(GrantSecrets.bindFrame(g));
            send(slow, g.id(), 0, 1);
            Await.inJvm("the first block holds the egress window", Duration.ofSeconds(10),
                    () -> f.source.status().egressInFlightBytes() == size);
            send(other, g.id(), 1, 2);
            assertThat(header(other).status()).isEqualTo(DataStatus.EGRESS_LIMIT);
            assertThat(f.source.status().dataRefusals().get(DataRefusal.EGRESS_LIMIT)).isEqualTo(1);
            DataFrames.ResponseHeader h = header(slow);
            skip(slow, h.length());
            Await.inJvm("egress drained", Duration.ofSeconds(10), () -> f.source.status().egressInFlightBytes() == 0);
            send(other, g.id(), 1, 3);
            DataFrames.ResponseHeader h2 = header(other);
            assertThat(h2.status()).as("a refused READ may be asked again").isEqualTo(DataStatus.OK);
            skip(other, h2.length());
        }
        // Counted when the source learns its write completed, which may follow the reader's last byte.
        Await.inJvm("both blocks counted as served", Duration.ofSeconds(10),
                () -> f.source.status().readsServed().get(PeerRouteClass.PEER_DRAM) == 2);
    }

    @Test
    @DisplayName("BND-2 INV-8 a Release is answered while a block's payload sits unsent; the released grant's pin stays until those bytes are written")
    void releaseBesidePendingPayload() throws Exception {
        int size = 32 << 20;
        TransferConfig c = TransferFixture.testConfig().withWindows(size, size, size, 64, 16);
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()).withConfig(c));
        long a = f.payloads.putDram(TransferFixture.key(1), TransferFixture.payload(size, 1, 1));
        long b = f.payloads.putDram(TransferFixture.key(2), TransferFixture.payload(1000, 1, 2));
        Grant big = f.grant(List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, a)));
        Grant other = f.grant(List.of(new BlockRef(TransferFixture.key(2), Medium.DRAM, b)));
        try (SocketChannel slow = connect()) {
            slow.write(GrantSecrets.bindFrame(big));
            send(slow, big.id(), 0, 1);
            Await.inJvm("the payload is in flight", Duration.ofSeconds(10),
                    () -> f.source.status().egressInFlightBytes() == size);
            assertThat(TransferFixture.await(f.engine.release(other))).isInstanceOf(ReleaseOutcome.Released.class);
            assertThat(TransferFixture.await(f.engine.release(big))).isInstanceOf(ReleaseOutcome.Released.class);
            TransferSourceStatus s = f.source.status();
            assertThat(s.grantsOutstanding()).isZero();
            assertThat(s.pinsHeld()).as("the released grant drains: its bytes are still on the wire").isEqualTo(1);
            assertThat(s.pinnedBytesHeld()).isEqualTo(size);
            DataFrames.ResponseHeader h = header(slow);
            skip(slow, h.length());
            Await.inJvm("the pin goes with the last byte written", Duration.ofSeconds(10),
                    () -> f.source.status().pinsHeld() == 0 && f.payloads.pinsHeld() == 0);
        }
    }
}
