package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import orbitkv.server.net.UnixSocket;
import orbitkv.server.incarnation.StandaloneMetadata;
import orbitkv.inventory.Scope;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.server.config.ListenAddress;
import orbitkv.server.net.NativeTransport;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import orbitkv.testing.RawHttp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import orbitkv.server.api.BlockFraming;

/**
 * Issue 33: the HTTP API on a Unix-domain socket ({@code --http-unix-socket}, {@code --http-unix-socket-mode})
 * for co-located engines, on Netty's native domain socket channel: the same handler and limits, the socket
 * file created with the asked mode, a stale socket replaced, the file removed on close.
 */
@Tag("unit")
class HttpUnixSocketTest {
    @TempDir
    Path dir;

    private LocalTiers tiers;
    private HttpApiServer server;

    private HttpApiServer start(HttpLimits limits, UnixSocket unix) throws Exception {
        ResidencySequence sequence = new ResidencySequence();
        tiers = new LocalTiers(DramTier.open(dir, 4 << 20, 64, sequence), null, sequence);
        server = HttpApiServer.start(new ListenAddress("127.0.0.1", 0), NativeTransport.detect(), tiers,
                new StandaloneMetadata(null, Incarnation.random(new NodeId("n1"), new NodeEpoch(1)), Scope.all()), limits, unix);
        return server;
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

    /** One raw HTTP/1.1 exchange over the socket file; the whole answer as text (the server closes). */
    private static String exchange(Path socket, byte[] request) throws IOException {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            ByteBuffer out = ByteBuffer.wrap(request);
            while (out.hasRemaining()) {
                ch.write(out);
            }
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            ByteBuffer in = ByteBuffer.allocate(8192);
            while (ch.read(in) >= 0) {
                all.write(in.array(), 0, in.position());
                in.clear();
            }
            return all.toString(StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    @DisplayName("OPS-5 issue 33: --http-unix-socket serves the HTTP API (a save, then /health) with the same handler; the file has"
            + " the asked mode and is removed on close")
    void unixSocket() throws Exception {
        Path socket = dir.resolve("http.sock");
        start(TestLimits.small(), new UnixSocket(socket, PosixFilePermissions.fromString("rw-------")));
        assertThat(Files.getPosixFilePermissions(socket)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
        try (var files = Files.list(dir)) {
            assertThat(files.filter(p -> p.getFileName().toString().startsWith(".okv")).toList())
                    .as("the staging directory is gone").isEmpty();
        }

        byte[] record = ByteBuffer.allocate(7 + 3).putShort((short) 1).put((byte) 0x42).putInt(3).put(new byte[] {1, 2, 3})
                .array();
        ByteArrayOutputStream save = new ByteArrayOutputStream();
        save.writeBytes(("POST /cache/save?namespace=uds HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: "
                + BlockFraming.CONTENT_TYPE + "\r\nContent-Length: " + record.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        save.writeBytes(record);
        assertThat(exchange(socket, save.toByteArray())).startsWith("HTTP/1.1 200").contains("\"key\":\"42\"");
        String health = exchange(socket, "GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
                .getBytes(StandardCharsets.US_ASCII));
        assertThat(health).startsWith("HTTP/1.1 200").contains("\"blocks\":1");
        assertThat(new RawHttp(server.boundAddress()).get("/health").text()).as("the TCP listener serves as well")
                .contains("\"blocks\":1");

        server.close();
        server = null;
        assertThat(socket).as("removed on close").doesNotExist();
    }

    @Test
    @DisplayName("OPS-5 issue 33: a stale socket file (its process gone) is replaced; a regular file at the path refuses the start")
    void staleSocketReplacedRegularFileRefused() throws Exception {
        Path socket = dir.resolve("stale.sock");
        try (ServerSocketChannel old = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            old.bind(UnixDomainSocketAddress.of(socket)); // closed without removing the file, like a crash
        }
        assertThat(socket).exists();
        start(TestLimits.small(), new UnixSocket(socket, PosixFilePermissions.fromString("rw-rw----")));
        assertThat(Files.getPosixFilePermissions(socket)).isEqualTo(PosixFilePermissions.fromString("rw-rw----"));
        assertThat(exchange(socket, "GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
                .getBytes(StandardCharsets.US_ASCII))).startsWith("HTTP/1.1 200");
        server.close();
        server = null;
        tiers.close();
        tiers = null;

        Path regular = Files.writeString(dir.resolve("regular"), "not a socket");
        assertThatThrownBy(() -> start(TestLimits.small(), new UnixSocket(regular, PosixFilePermissions.fromString("rw-------"))))
                .hasMessageContaining("exists and is not a socket");
        assertThat(Files.readString(regular)).isEqualTo("not a socket");
    }
}
