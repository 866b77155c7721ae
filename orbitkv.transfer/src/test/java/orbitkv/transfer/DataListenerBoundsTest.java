package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.testing.Await;
import orbitkv.transfer.frame.DataFrames;
import orbitkv.transfer.frame.DataStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The data listener's bounds against raw loopback sockets (issue 33 Deliver 1; BND-1, docs/transfer.md "Data
 * channel bounds"): pipelined READs capped per connection with backpressure, a partial-request deadline, an idle
 * deadline, connection caps per listener and per peer address, and a MALFORMED frame that ends its connection before
 * anything behind it is served. Each test is named after the finding it guards.
 */
@Tag("unit")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DataListenerBoundsTest {
    private TransferFixture f;

    @AfterEach
    void stop() throws IOException {
        if (f != null) {
            f.close();
        }
    }

    private void start(TransferConfig c) throws IOException {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()).withConfig(c));
    }

    private int port() {
        return f.source.boundDataAddress().getPort();
    }

    private SocketChannel connect(String from) throws IOException {
        SocketChannel s = SocketChannel.open();
        s.bind(new InetSocketAddress(from, 0));
        s.connect(new InetSocketAddress("127.0.0.1", port()));
        s.socket().setSoTimeout(30_000);
        return s;
    }

    private static ByteBuffer reads(int n, long firstReadId) {
        ByteBuf b = Unpooled.buffer(n * DataFrames.REQUEST_BYTES);
        for (int i = 0; i < n; i++) {
            DataFrames.writeRequest(b, UUID.randomUUID(), 0, firstReadId + i);
        }
        return b.nioBuffer();
    }

    /** Reads response headers until the source closes the connection. */
    private static List<DataFrames.ResponseHeader> headersUntilClosed(SocketChannel s) throws Exception {
        List<DataFrames.ResponseHeader> out = new ArrayList<>();
        ByteBuffer h = ByteBuffer.allocate(DataFrames.RESPONSE_HEADER_BYTES);
        var in = s.socket().getInputStream();
        while (true) {
            int r = in.read(h.array(), h.position(), h.remaining());
            if (r < 0) {
                return out;
            }
            h.position(h.position() + r);
            if (!h.hasRemaining()) {
                out.add(DataFrames.readResponseHeader(h.array()));
                h.clear();
            }
        }
    }

    /**
     * True once the source closed {@code s} (read sees end of stream or a reset); false when nothing happens within
     * the socket's 30 s read timeout or a byte arrives.
     */
    private static boolean closedBySource(SocketChannel s) {
        try {
            return s.socket().getInputStream().read() < 0;
        } catch (SocketTimeoutException open) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    private long refusals(DataRefusal r) {
        return f.source.status().dataRefusals().get(r);
    }

    @Test
    @DisplayName("BND-1 issue 33: a Manager can be crashed by anyone who reaches its data port -> pipelined READs that"
            + " are never read pause the connection at dataReadsQueuedPerConnectionMax; answers stop queueing")
    void aManagerCanBeCrashedByAnyoneWhoReachesItsDataPort() throws Exception {
        start(TransferFixture.testConfig());
        int frames = 1_000_000; // 40 MB of READs, far more than the loopback socket buffers of both directions hold
        SocketChannel s = SocketChannel.open();
        s.setOption(StandardSocketOptions.SO_RCVBUF, 4096); // the attacker never reads: keep its window small
        s.setOption(StandardSocketOptions.SO_SNDBUF, 8192);
        s.connect(new InetSocketAddress("127.0.0.1", port()));
        AtomicLong written = new AtomicLong();
        Thread writer = Thread.ofPlatform().daemon().name("flood").start(() -> {
            try {
                for (int sent = 0; sent < frames; sent += 4096) {
                    ByteBuffer b = reads(Math.min(4096, frames - sent), sent);
                    while (b.hasRemaining()) {
                        s.write(b);
                    }
                    written.addAndGet(4096);
                }
            } catch (IOException closed) {
                // the test closes the socket under a blocked write
            }
        });
        try {
            // The fixed listener pauses once its answers stop draining; the old one decodes all of them.
            Await.inJvm("the listener paused reading, or the flood was decoded completely", Duration.ofSeconds(60),
                    () -> f.source.status().dataReadPauses().get(DataReadPause.READS_QUEUED_MAX) > 0
                            || refusals(DataRefusal.GRANT_UNKNOWN) >= frames);
            // Once paused it stays paused: the count of decoded READs stops growing while the writer is blocked.
            long before;
            long after = refusals(DataRefusal.GRANT_UNKNOWN);
            do {
                before = after;
                Thread.sleep(500); // an observation window, not synchronization: the bound below holds at all times
                after = refusals(DataRefusal.GRANT_UNKNOWN);
            } while (after != before && after < frames);
            assertThat(after).as("READs decoded out of %d pipelined and never read (the rest wait in socket buffers)",
                    frames).isLessThan(frames / 2);
            assertThat(writer.isAlive()).as("the flood cannot be written: the listener stopped reading it").isTrue();
            assertThat(f.source.status().dataConnections()).isEqualTo(1);
        } finally {
            s.close();
            writer.join(30_000);
        }
    }

    @Test
    @DisplayName("BND-1 issue 33: the data port has no partial-header deadline -> 4 of 40 header bytes are closed after"
            + " dataHeaderTimeoutMs, counted as a header timeout")
    void theDataPortHasNoPartialHeaderDeadline() throws Exception {
        long timeoutMs = 300;
        TransferConfig d = TransferFixture.testConfig();
        start(d.withDataListener(d.dataConnectionsMax(), d.dataConnectionsPerAddressMax(), timeoutMs,
                d.dataIdleTimeoutMs(), d.dataReadsQueuedPerConnectionMax()));
        try (SocketChannel s = connect("127.0.0.1")) {
            long t0 = System.nanoTime();
            s.write(ByteBuffer.wrap(new byte[] {'O', 'K', 'V', 'R'}));
            assertThat(closedBySource(s)).as("a connection holding 4 of 40 bytes is closed").isTrue();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isGreaterThanOrEqualTo(timeoutMs - 5);
        }
        Await.inJvm("the header timeout counted", Duration.ofSeconds(20),
                () -> f.source.status().dataConnectionTimeouts().get(DataConnectionTimeout.HEADER) == 1);
        Await.inJvm("the connection released", Duration.ofSeconds(20), () -> f.source.status().dataConnections() == 0);
        // a whole READ in two pieces is served: the deadline runs only while a frame is partial
        try (SocketChannel s = connect("127.0.0.1")) {
            ByteBuffer one = reads(1, 7);
            ByteBuffer head = one.duplicate().limit(10);
            s.write(head);
            s.write(one.position(10));
            ByteBuffer h = ByteBuffer.allocate(DataFrames.RESPONSE_HEADER_BYTES);
            var in = s.socket().getInputStream();
            int n = 0;
            while (n < h.capacity()) {
                int r = in.read(h.array(), n, h.capacity() - n);
                assertThat(r).as("answer bytes").isPositive();
                n += r;
            }
            assertThat(DataFrames.readResponseHeader(h.array()).status()).isEqualTo(DataStatus.GRANT_UNKNOWN);
        }
        assertThat(f.source.status().dataConnectionTimeouts().get(DataConnectionTimeout.HEADER)).isEqualTo(1);
    }

    @Test
    @DisplayName("BND-1 issue 33: a data connection without progress is closed after dataIdleTimeoutMs, counted as idle")
    void anIdleDataConnectionIsClosed() throws Exception {
        TransferConfig d = TransferFixture.testConfig();
        start(d.withDataListener(d.dataConnectionsMax(), d.dataConnectionsPerAddressMax(), d.dataHeaderTimeoutMs(),
                300, d.dataReadsQueuedPerConnectionMax()));
        try (SocketChannel s = connect("127.0.0.1")) {
            assertThat(closedBySource(s)).isTrue();
        }
        Await.inJvm("the idle timeout counted", Duration.ofSeconds(20),
                () -> f.source.status().dataConnectionTimeouts().get(DataConnectionTimeout.IDLE) == 1);
    }

    @Test
    @DisplayName("BND-1 issue 33: the data port has no connection cap -> connections beyond the per-address and the"
            + " listener cap are closed at accept, counted by bound; a freed slot admits again")
    void theDataPortHasNoConnectionCap() throws Exception {
        TransferConfig d = TransferFixture.testConfig().withWindows(64L << 20, 256L << 20, 256L << 20, 64, 2);
        start(d.withDataListener(6, 4, d.dataHeaderTimeoutMs(), d.dataIdleTimeoutMs(),
                d.dataReadsQueuedPerConnectionMax()));
        List<SocketChannel> open = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                open.add(connect("127.0.0.1"));
            }
            Await.inJvm("four admitted", Duration.ofSeconds(20), () -> f.source.status().dataConnections() == 4);
            try (SocketChannel fifth = connect("127.0.0.1")) {
                assertThat(closedBySource(fifth)).as("a fifth connection from one address").isTrue();
            }
            open.add(connect("127.0.0.2"));
            open.add(connect("127.0.0.2"));
            Await.inJvm("six admitted", Duration.ofSeconds(20), () -> f.source.status().dataConnections() == 6);
            try (SocketChannel seventh = connect("127.0.0.3")) {
                assertThat(closedBySource(seventh)).as("a seventh connection to the listener").isTrue();
            }
            var refusals = f.source.status().dataConnectionRefusals();
            assertThat(refusals.get(DataConnectionRefusal.CONNECTIONS_PER_ADDRESS_MAX)).isEqualTo(1);
            assertThat(refusals.get(DataConnectionRefusal.CONNECTIONS_MAX)).isEqualTo(1);
            open.removeFirst().close();
            Await.inJvm("a slot freed", Duration.ofSeconds(20), () -> f.source.status().dataConnections() == 5);
            try (SocketChannel again = connect("127.0.0.3")) {
                again.write(reads(1, 1));
                assertThat(headersUntilClosedOrFirst(again)).as("a freed slot serves again")
                        .isEqualTo(DataStatus.GRANT_UNKNOWN);
            }
        } finally {
            for (SocketChannel s : open) {
                s.close();
            }
        }
    }

    private static DataStatus headersUntilClosedOrFirst(SocketChannel s) throws Exception {
        ByteBuffer h = ByteBuffer.allocate(DataFrames.RESPONSE_HEADER_BYTES);
        var in = s.socket().getInputStream();
        int n = 0;
        while (n < h.capacity()) {
            int r = in.read(h.array(), n, h.capacity() - n);
            if (r < 0) {
                return null;
            }
            n += r;
        }
        return DataFrames.readResponseHeader(h.array()).status();
    }

    @Test
    @DisplayName("BND-1 issue 33: a malformed READ frame does not stop the READs decoded behind it -> it is answered"
            + " MALFORMED and the connection closed; nothing behind it is served")
    void aMalformedReadFrameDoesNotStopTheReadsDecodedBehindIt() throws Exception {
        start(TransferFixture.testConfig());
        try (SocketChannel s = connect("127.0.0.1")) {
            ByteBuf b = Unpooled.buffer(5 * DataFrames.REQUEST_BYTES);
            DataFrames.writeRequest(b, UUID.randomUUID(), 0, 1);
            b.writeZero(DataFrames.REQUEST_BYTES); // bad magic
            for (int i = 0; i < 3; i++) {
                DataFrames.writeRequest(b, UUID.randomUUID(), 0, 10 + i);
            }
            ByteBuffer all = b.nioBuffer();
            while (all.hasRemaining()) {
                s.write(all); // one write: the frames arrive in one socket read
            }
            List<DataFrames.ResponseHeader> answers = headersUntilClosed(s);
            assertThat(answers).extracting(DataFrames.ResponseHeader::status)
                    .as("answers before the close").containsExactly(DataStatus.GRANT_UNKNOWN, DataStatus.MALFORMED);
        }
        assertThat(refusals(DataRefusal.GRANT_UNKNOWN)).as("READs served behind the malformed frame").isEqualTo(1);
    }
}
