package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
 * Source egress per NIC (issue 39 item 2; ROUTE-11, BND-1, INV-8): every send is charged to the node-wide account of
 * the data listener's NIC (loopback here) beside the source's own window; a send the account refuses is refused by
 * name ({@link DataRefusal#EGRESS_NIC_WINDOW}, {@code EGRESS_LIMIT} on the wire) and changes nothing else; a charge
 * returns only at the send's physical end (written out, or its connection cut), never before.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NicEgressTest {
    private TransferFixture f;

    @AfterEach
    void stop() throws IOException {
        if (f != null) {
            f.close();
        }
    }

    /** A byte window per NIC, as the Manager's transmit lane is; records every NIC it was asked about. */
    static final class WindowAccount implements EgressAccount {
        final long bytesMax;
        final AtomicLong charged = new AtomicLong();
        final AtomicLong completions = new AtomicLong();
        final Set<String> nics = ConcurrentHashMap.newKeySet();

        WindowAccount(long bytesMax) {
            this.bytesMax = bytesMax;
        }

        @Override
        public synchronized Charge charge(String nic, long bytes) {
            nics.add(nic);
            if (charged.get() + bytes > bytesMax) {
                return new Charge.Refused("window-full: " + bytes + " bytes beside " + charged.get() + " of " + bytesMax
                        + " on " + nic + "/tx");
            }
            charged.addAndGet(bytes);
            AtomicLong once = new AtomicLong();
            return new Charge.Held(() -> {
                assertThat(once.incrementAndGet()).as("a charge completes exactly once").isEqualTo(1);
                completions.incrementAndGet();
                charged.addAndGet(-bytes);
            });
        }
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
        ByteBuffer b = ByteBuffer.allocate(1 << 20);
        long left = n;
        while (left > 0) {
            b.clear().limit((int) Math.min(b.capacity(), left));
            int r = s.read(b);
            if (r < 0) {
                throw new IOException("closed with " + left + " bytes left");
            }
            left -= r;
        }
    }

    /** Two 32 MiB DRAM blocks in one grant; the source's own window holds both, the NIC account one. */
    private Grant twoBlocks(WindowAccount account, int size) throws IOException {
        TransferConfig c = TransferFixture.testConfig().withWindows(size, 2L * size, 2L * size, 64, 16);
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()).withConfig(c)
                .withEgressAccount(account));
        long a = f.payloads.putDram(TransferFixture.key(1), TransferFixture.payload(size, 1, 1));
        long b = f.payloads.putDram(TransferFixture.key(2), TransferFixture.payload(size, 1, 2));
        return f.grant(List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, a),
                new BlockRef(TransferFixture.key(2), Medium.DRAM, b)));
    }

    @Test
    @DisplayName("ROUTE-11 BND-1 the NIC's egress account full: the READ is refused by name (EGRESS_LIMIT on the wire), nothing else changes; the charge returns at the physical end of the send, then the block is served")
    void nicWindowRefusesByNameAndReturnsAtSendEnd() throws Exception {
        int size = 32 << 20;
        WindowAccount account = new WindowAccount(size);
        Grant g = twoBlocks(account, size);
        assertThat(f.source.egressNic()).as("the NIC of 127.0.0.1").isEqualTo("lo");
        try (SocketChannel slow = connect(); SocketChannel other = connect()) {
            slow.write(GrantSecrets.bindFrame(g));
            other.write(GrantSecrets.bindFrame(g));
            send(slow, g.id(), 0, 1);
            Await.inJvm("the first block holds the NIC account", Duration.ofSeconds(20),
                    () -> account.charged.get() == size && f.source.status().egressInFlightBytes() == size);
            send(other, g.id(), 1, 2);
            assertThat(header(other).status()).isEqualTo(DataStatus.EGRESS_LIMIT);
            TransferSourceStatus s = f.source.status();
            assertThat(s.dataRefusals()).containsEntry(DataRefusal.EGRESS_NIC_WINDOW, 1L)
                    .containsEntry(DataRefusal.EGRESS_LIMIT, 0L);
            assertThat(s.egressInFlightBytes()).as("the refused send took nothing of the source's own window")
                    .isEqualTo(size);
            assertThat(account.charged.get()).as("nor of the NIC account").isEqualTo(size);
            assertThat(account.completions.get()).as("the unread send is not returned: its bytes are on the wire")
                    .isZero();
            DataFrames.ResponseHeader h = header(slow);
            skip(slow, h.length());
            Await.inJvm("returned at the send's physical end", Duration.ofSeconds(20),
                    () -> account.charged.get() == 0 && account.completions.get() == 1);
            send(other, g.id(), 1, 3);
            DataFrames.ResponseHeader h2 = header(other);
            assertThat(h2.status()).as("a refused READ may be asked again").isEqualTo(DataStatus.OK);
            skip(other, h2.length());
        }
        Await.inJvm("both sends returned", Duration.ofSeconds(20),
                () -> account.charged.get() == 0 && account.completions.get() == 2);
        assertThat(account.nics).containsExactly("lo");
    }

    @Test
    @DisplayName("INV-8 ROUTE-11 a send cut before its bytes were read returns its NIC charge when the write fails, not before")
    void cutSendReturnsItsCharge() throws Exception {
        int size = 32 << 20;
        WindowAccount account = new WindowAccount(2L * size);
        Grant g = twoBlocks(account, size);
        SocketChannel slow = connect();
        slow.write(GrantSecrets.bindFrame(g));
        send(slow, g.id(), 0, 1);
        Await.inJvm("the send holds its charge", Duration.ofSeconds(20), () -> account.charged.get() == size);
        assertThat(account.completions.get()).isZero();
        slow.close(); // the requester goes away: the write fails
        Await.inJvm("the failed write returned the charge", Duration.ofSeconds(20),
                () -> account.charged.get() == 0 && account.completions.get() == 1);
        assertThat(f.source.status().egressInFlightBytes()).isZero();
    }

    @Test
    @DisplayName("ROUTE-11 a source without a node-wide account (EgressAccount.NONE) is bounded by its own window only")
    void noAccountChargesNothing() {
        assertThat(EgressAccount.NONE.charge("lo", 1)).isSameAs(EgressAccount.Charge.Held.FREE);
    }
}
