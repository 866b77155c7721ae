package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.inventory.Medium;
import orbitkv.testing.Await;
import orbitkv.transfer.frame.DataFrames;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A requester that black-holes its data connection (asks for a block, then never reads, never closes, never
 * releases: a stalled or partitioned peer) must not hold the source's pin past the grant's end (INV-9: the grant
 * is the pin's terminal owner, not TCP's retransmission timeout). The block is 16 MiB and the requester's receive
 * buffer tiny, so the write cannot complete into socket buffers; the source's clock is injected and the source's
 * own expiry sweep (every 10 ms of real time in {@link TransferFixture#testConfig()}) ends the grant.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GrantEndCutsSendTest {
    private static final int BLOCK = 16 << 20;
    private static final Duration BOUND = Duration.ofSeconds(10);
    private final AtomicLong sourceClock = new AtomicLong(1_000_000_000L);
    private TransferFixture f;

    @BeforeEach
    void start() throws IOException {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()).withSourceClock(sourceClock::get));
    }

    @AfterEach
    void stop() throws IOException {
        f.close();
    }

    /** Connects with a 4 KiB receive buffer (set before connect, so the window is small from the handshake on). */
    private SocketChannel blackHole(Grant g) throws IOException {
        SocketChannel s = SocketChannel.open();
        s.setOption(StandardSocketOptions.SO_RCVBUF, 4096);
        s.connect(new InetSocketAddress("127.0.0.1", f.source.boundDataAddress().getPort()));
        s.write(orbitkv.transfer.requester.GrantSecrets.bindFrame(g));
        io.netty.buffer.ByteBuf b = io.netty.buffer.Unpooled.buffer(DataFrames.REQUEST_BYTES);
        DataFrames.writeRequest(b, g.id(), 0, 1);
        s.write(b.nioBuffer());
        Await.inJvm("the send holds the pin and the egress window", BOUND,
                () -> f.source.status().egressInFlightBytes() == BLOCK);
        return s;
    }

    private Grant grant(Medium medium) {
        byte[] bytes = TransferFixture.payload(BLOCK, 1, 1);
        long seq = medium == Medium.DRAM ? f.payloads.putDram(TransferFixture.key(1), bytes)
                : f.payloads.putSsd(TransferFixture.key(1), bytes);
        return f.grant(List.of(new BlockRef(TransferFixture.key(1), medium, seq)));
    }

    private void expire() {
        sourceClock.addAndGet(TimeUnit.MILLISECONDS.toNanos(f.config.grantExpiryMs()));
    }

    /** The pin, its bytes, the payload owner's pin and the egress window all return to zero. */
    private void awaitReleased(String why) {
        Await.inJvm("pin and egress back to zero after " + why, BOUND, () -> {
            TransferSourceStatus s = f.source.status();
            return s.pinsHeld() == 0 && s.pinnedBytesHeld() == 0 && s.egressInFlightBytes() == 0
                    && f.payloads.pinsHeld() == 0;
        });
    }

    /** The source closed the connection: the requester reads what was in flight, then end of stream (or a reset). */
    private static void awaitClosedBySource(SocketChannel s) throws IOException {
        s.configureBlocking(false);
        ByteBuffer sink = ByteBuffer.allocateDirect(1 << 20);
        Await.inJvm("the source closed the data connection", BOUND, () -> {
            try {
                int n;
                while ((n = s.read(sink.clear())) > 0) {
                    // discard
                }
                return n < 0;
            } catch (IOException reset) {
                return true;
            }
        });
    }

    @Test
    @DisplayName("INV-9 a black-holed READ is cut at grant expiry: the connection is closed, pin and egress return to zero, counted")
    void expiryCutsStalledSend() throws IOException {
        Grant g = grant(Medium.DRAM);
        try (SocketChannel s = blackHole(g)) {
            assertThat(f.source.status().pinsHeld()).isEqualTo(1);
            expire();
            awaitReleased("expiry");
            TransferSourceStatus st = f.source.status();
            assertThat(st.grantsEnded().get(GrantEnd.EXPIRED)).isEqualTo(1);
            assertThat(st.sendsCut()).containsEntry(GrantEnd.EXPIRED, 1L);
            assertThat(st.readsServed().get(PeerRouteClass.PEER_DRAM)).as("a cut send is not served").isZero();
            awaitClosedBySource(s);
        }
    }

    @Test
    @DisplayName("INV-9 IDX-13 excluding the requester cuts its black-holed SSD send (sendfile) at once, before any expiry")
    void exclusionCutsStalledSend() throws IOException {
        Grant g = grant(Medium.SSD);
        try (SocketChannel s = blackHole(g)) {
            f.source.onMembership(f.membership.set(true, f.sourceIncarnation));
            awaitReleased("exclusion");
            assertThat(f.source.status().sendsCut()).containsEntry(GrantEnd.EXCLUDED, 1L);
            awaitClosedBySource(s);
        }
    }

    @Test
    @DisplayName("INV-9 BND-2 a released grant drains its in-flight send, but never past the grant's expiry")
    void releasedDrainEndsAtExpiry() throws IOException {
        Grant g = grant(Medium.DRAM);
        try (SocketChannel s = blackHole(g)) {
            assertThat(TransferFixture.await(f.engine.release(g))).isInstanceOf(ReleaseOutcome.Released.class);
            assertThat(f.source.status().pinsHeld()).as("DRAINING: the bytes are still on the wire").isEqualTo(1);
            assertThat(f.source.status().sendsCut().values()).as("a release does not cut").containsOnly(0L);
            expire();
            awaitReleased("the released grant's expiry");
            assertThat(f.source.status().sendsCut()).containsEntry(GrantEnd.EXPIRED, 1L);
            assertThat(f.source.status().grantsEnded().get(GrantEnd.RELEASED)).isEqualTo(1);
            awaitClosedBySource(s);
        }
    }
}
