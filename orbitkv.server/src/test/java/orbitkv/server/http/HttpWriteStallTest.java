package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.Scope;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.server.api.BlockFraming;
import orbitkv.server.config.ListenAddress;
import orbitkv.server.incarnation.StandaloneMetadata;
import orbitkv.server.net.NativeTransport;
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import orbitkv.testing.Await;
import orbitkv.testing.RawHttp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The answer-side bound of an HTTP connection ({@code --http-write-stall-ms}): a client that asks for a restore
 * answer and stops reading holds its request slot and the restore memory budget only until the answer's pending
 * bytes made no progress for the bound; then the connection closes ({@code write_stall}) and both return. A slow
 * reader that keeps taking bytes is not cut, however long the answer stays above Netty's high-water mark.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpWriteStallTest {
    private static final long STALL_MS = 2_000;
    private static final int BLOCK_BYTES = 2 << 20;
    private static final int BLOCKS = 8; // 16 MiB of answer: far beyond the loopback socket buffers
    private static final Duration BOUND = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private LocalTiers tiers;
    private HttpApiServer server;
    private RawHttp http;

    @BeforeEach
    void start() throws Exception {
        ResidencySequence sequence = new ResidencySequence();
        tiers = new LocalTiers(DramTier.open(dir, 64 << 20, 64, sequence), null, sequence,
                new CopyOutBudget(64 << 20));
        HttpLimits t = TestLimits.defaults().withBodies(32 << 20, 64 * 1024, BLOCK_BYTES);
        HttpLimits.Timeouts d = t.timeouts();
        server = HttpApiServer.start(new ListenAddress("127.0.0.1", 0), NativeTransport.detect(), tiers,
                new StandaloneMetadata(null, Incarnation.random(new NodeId("n1"), new NodeEpoch(1)), Scope.all()),
                t.withTimeouts(new HttpLimits.Timeouts(d.headerMs(), d.bodyProgressMs(), d.bodyProgressBytesMin(),
                        d.idleMs(), d.lingerMs(), d.lingerBytesMax(), STALL_MS)));
        http = new RawHttp(server.boundAddress());
        List<BlockFraming.Block> blocks = new ArrayList<>();
        for (int i = 0; i < BLOCKS; i++) {
            blocks.add(new BlockFraming.Block(new byte[] {(byte) 0xd0, (byte) i}, HttpApiTest.payload(7, i, BLOCK_BYTES)));
        }
        assertThat(http.post("/cache/save?namespace=ns", BlockFraming.CONTENT_TYPE, HttpApiTest.body(blocks)).status())
                .isEqualTo(200);
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
        if (tiers != null) {
            tiers.close();
        }
    }

    private static byte[] restoreRequest(boolean stream) {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < BLOCKS; i++) {
            keys.add("\"" + HexFormat.of().formatHex(new byte[] {(byte) 0xd0, (byte) i}) + "\"");
        }
        String json = "{\"namespace\": \"ns\", \"stream\": " + stream + ", \"keys\": [" + String.join(", ", keys) + "]}";
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        String head = "POST /cache/restore HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: "
                + body.length + "\r\n\r\n";
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[h.length + body.length];
        System.arraycopy(h, 0, all, 0, h.length);
        System.arraycopy(body, 0, all, h.length, body.length);
        return all;
    }

    /** A client socket with the smallest receive buffer the kernel allows, so unread bytes back up at once. */
    private Socket client() throws IOException {
        Socket s = new Socket();
        s.setReceiveBufferSize(4096);
        InetSocketAddress a = server.boundAddress();
        s.connect(a, 5_000);
        return s;
    }

    private double metric(String sample) throws IOException {
        for (String line : http.get("/metrics").text().split("\n")) {
            if (line.startsWith(sample + " ")) {
                return Double.parseDouble(line.substring(sample.length() + 1).strip());
            }
        }
        return 0;
    }

    private static final String STALLS = "orbitkv_http_connections_closed_total{cause=\"write_stall\"}";

    @ParameterizedTest(name = "stream={0}")
    @ValueSource(booleans = {false, true})
    @DisplayName("INV-9 BND-1: a restore answer the client stops reading is cut after --http-write-stall-ms (write_stall); the restore budget returns")
    void stalledReaderIsCut(boolean stream) throws Exception {
        try (Socket s = client()) {
            s.getOutputStream().write(restoreRequest(stream));
            s.getOutputStream().flush();
            Await.inJvm("the unread answer holds restore budget", BOUND, () -> tiers.copyOut().heldBytes() > 0);
            Await.inJvm("the stalled answer's connection is closed as write_stall", BOUND, () -> {
                try {
                    return metric(STALLS) == 1.0;
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            Await.inJvm("the restore budget returns", BOUND, () -> tiers.copyOut().heldBytes() == 0);
            assertThat(metric("orbitkv_http_connections_closed_total{cause=\"write_failed\"}"))
                    .as("the failed write is the stall's consequence, counted once under its cause").isZero();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[1 << 16];
            long read = 0;
            s.setSoTimeout(10_000);
            for (int n; (n = in.read(buf)) >= 0; ) { // what the kernel buffered, then the close
                read += n;
            }
            assertThat(read).as("the answer was cut short").isLessThan((long) BLOCKS * BLOCK_BYTES);
        }
        assertThat(http.get("/health").status()).as("the Manager still serves").isEqualTo(200);
    }

    @ParameterizedTest(name = "stream={0}")
    @ValueSource(booleans = {false, true})
    @DisplayName("INV-9: a slow reader that keeps taking bytes gets the whole answer although it stays unwritable longer than --http-write-stall-ms")
    void slowReaderIsNotCut(boolean stream) throws Exception {
        long total = 0;
        long started = System.nanoTime();
        try (Socket s = client()) {
            OutputStream out = s.getOutputStream();
            out.write(restoreRequest(stream));
            out.flush();
            InputStream in = s.getInputStream();
            s.setSoTimeout(10_000);
            byte[] buf = new byte[1 << 16];
            long sincePause = 0;
            long expected = (long) BLOCKS * (BLOCK_BYTES + 2 + 2 + 4); // at least the records' bytes
            while (total < expected) {
                int n = in.read(buf);
                if (n < 0) {
                    break;
                }
                total += n;
                sincePause += n;
                if (sincePause >= (1 << 20)) { // a slow client: 1 MiB, then a pause (pacing, not synchronization)
                    sincePause = 0;
                    Thread.sleep(200);
                }
            }
        }
        long elapsedMs = (System.nanoTime() - started) / 1_000_000;
        assertThat(total).as("every record arrived").isGreaterThanOrEqualTo((long) BLOCKS * BLOCK_BYTES);
        assertThat(elapsedMs).as("the answer took longer than the stall bound (else this proves nothing)")
                .isGreaterThan(STALL_MS);
        assertThat(metric(STALLS)).isZero();
    }
}
