package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import orbitkv.testing.RawConnection;
import orbitkv.testing.RawHttp;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 33, "SIGTERM during large saves leaves saves in flight and saves started after it with no answer at
 * all", on a real standalone Manager process: large saves receiving their body when SIGTERM arrives, and saves
 * started during the drain, each get a complete HTTP answer: 200 (completed within {@code --shutdown-drain-ms})
 * or 503 {@code SHUTTING_DOWN} with {@code Connection: close}; none a reset, none silence. The process exits 0.
 */
@Tag("gate")
class ShutdownDrainGateTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final int RECORD_BYTES = 1 << 20;
    private static final int RECORDS = 8;

    /** One record of {@code RECORD_BYTES} payload bytes, key {@code key}. */
    private static byte[] record(int key) {
        return ByteBuffer.allocate(7 + RECORD_BYTES).putShort((short) 1).put((byte) key).putInt(RECORD_BYTES).array();
    }

    /** A save body of {@code RECORDS} records, keys from {@code first}. */
    private static byte[] body(int first) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int i = 0; i < RECORDS; i++) {
            b.writeBytes(record(first + i));
        }
        return b.toByteArray();
    }

    private static String saveHead(int length) {
        return "POST /cache/save?namespace=drain HTTP/1.1\r\nHost: gate\r\nContent-Type: application/x-orbitkv-blocks\r\n"
                + "Content-Length: " + length + "\r\n\r\n";
    }

    private static String code(RawHttp.Response r) throws IOException {
        return json(r).at("/error/code").asText();
    }

    private static JsonNode json(RawHttp.Response r) throws IOException {
        return JSON.readTree(r.body());
    }

    /** A large save whose body trickles from a virtual thread until its answer arrives or the server stops reading. */
    private static final class SlowSave implements AutoCloseable {
        final RawConnection conn;
        final AtomicBoolean answered = new AtomicBoolean();
        final Thread writer;

        SlowSave(InetSocketAddress address, int firstKey) throws IOException {
            byte[] body = body(firstKey);
            conn = new RawConnection(address, BOUND);
            conn.write(saveHead(body.length)).write(body, 0, RECORD_BYTES); // about one record, then a trickle
            writer = Thread.ofVirtual().start(() -> {
                try {
                    for (int off = RECORD_BYTES; off < body.length - 1 && !answered.get(); off += 16 * 1024) {
                        conn.write(body, off, Math.min(off + 16 * 1024, body.length - 1)); // never the last byte
                        Thread.sleep(100);
                    }
                } catch (IOException | InterruptedException e) {
                    // the server answered and stopped reading: the answer is what the test reads
                }
            });
        }

        RawHttp.Response read() throws IOException {
            try {
                return conn.read();
            } finally {
                answered.set(true);
            }
        }

        @Override
        public void close() throws IOException {
            answered.set(true);
            conn.close();
        }
    }

    private static RawHttp.Response health(InetSocketAddress address) throws IOException {
        try (RawConnection c = new RawConnection(address, BOUND)) {
            return c.write("GET /health HTTP/1.1\r\nHost: gate\r\nConnection: close\r\n\r\n").read();
        }
    }

    private static String metrics(InetSocketAddress address) throws IOException {
        try (RawConnection c = new RawConnection(address, BOUND)) {
            return new String(c.write("GET /metrics HTTP/1.1\r\nHost: gate\r\nConnection: close\r\n\r\n").read().body(),
                    StandardCharsets.UTF_8);
        }
    }

    private static void assertShuttingDown(RawHttp.Response r, String what) throws IOException {
        assertThat(r.status()).as("%s: %s", what, r.text()).isEqualTo(503);
        assertThat(code(r)).as(what).isEqualTo("SHUTTING_DOWN");
        assertThat(r.headers().get("connection")).as(what).isEqualTo("close");
    }

    @Test
    @DisplayName("INV-9 issue 33: SIGTERM during large saves leaves saves in flight and saves started after it with no"
            + " answer at all -> every save gets a complete answer: 200, or 503 SHUTTING_DOWN with Connection: close")
    void sigtermDuringLargeSavesLeavesSavesWithNoAnswer(@TempDir Path dir) throws Exception {
        Path dram = Files.createDirectories(dir.resolve("dram"));
        ManagerProcess m = ManagerProcess.start("drain", dir.resolve("logs"), List.of("--standalone",
                "--http-listen", "127.0.0.1:0", "--dram", "128MiB", "--block-bytes-max", "1MiB",
                "--save-body-bytes-max", "16MiB", "--dram-dir", dram.toString(), "--shutdown-drain-ms", "10000",
                // the trickles must outlive the drain: only the drain bound may end them here
                "--http-body-progress-ms", "60000", "--http-body-progress-bytes-min", "1"));
        List<SlowSave> slow = new ArrayList<>();
        try {
            URI base = URI.create(m.httpBase());
            InetSocketAddress http = new InetSocketAddress(base.getHost(), base.getPort());
            for (int i = 0; i < 4; i++) {
                slow.add(new SlowSave(http, 0x10 * (i + 1)));
            }
            byte[] finishing = body(0x60);
            RawConnection completes = new RawConnection(http, BOUND); // receiving its body at SIGTERM, completed during the drain
            completes.write(saveHead(finishing.length)).write(finishing, 0, RECORD_BYTES);
            long until = System.nanoTime() + BOUND.toNanos();
            while (!metrics(http).contains("orbitkv_http_requests_in_flight 5.0")) {
                assertThat(System.nanoTime() - until).as("5 saves admitted").isNegative();
                Thread.onSpinWait();
            }

            m.sigterm();
            RawHttp.Response h = health(http);
            while (h.status() == 200) { // SIGTERM is handled asynchronously: admission stops shortly after
                assertThat(System.nanoTime() - until).as("admission stops").isNegative();
                h = health(http);
            }
            assertShuttingDown(h, "/health during the drain");

            completes.write(finishing, RECORD_BYTES, finishing.length);
            RawHttp.Response done = completes.read();
            assertThat(done.status()).as("a save completed during the drain: %s", done.text()).isEqualTo(200);
            assertThat(done.headers().get("connection")).isEqualTo("close");
            completes.close();

            for (int i = 0; i < 4; i++) { // saves started during the drain: new connections are answered
                byte[] later = body(0x80 + i * RECORDS);
                try (RawConnection c = new RawConnection(http, BOUND)) {
                    c.write(saveHead(later.length));
                    try {
                        c.write(later, 0, later.length);
                    } catch (IOException e) {
                        // answered early; the answer is waiting
                    }
                    assertShuttingDown(c.read(), "a save started during the drain");
                }
            }

            for (SlowSave s : slow) { // still receiving their bodies when the drain bound ran out
                assertShuttingDown(s.read(), "a trickling save at the drain bound");
            }
            assertThat(m.awaitExit(BOUND)).as(m.stderrText()).isZero();
        } finally {
            for (SlowSave s : slow) {
                s.close();
            }
            m.close();
        }
        assertThat(Arrays.asList(dram.toFile().list())).as("the DRAM arena is removed").isEmpty();
    }
}
