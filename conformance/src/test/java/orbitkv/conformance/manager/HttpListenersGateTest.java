package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import orbitkv.testing.TestCerts;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 33 on a real Manager process, through its command line: the HTTP API over TLS
 * ({@code --http-tls-cert-file}, {@code --http-tls-key-file}) and on a Unix-domain socket
 * ({@code --http-unix-socket}, mode 0600), with the read token ({@code --http-read-token-file}) enforced on
 * both listeners; the socket file is removed at SIGTERM.
 */
@Tag("gate")
class HttpListenersGateTest {
    private static final String WRITER = "gate-writer-token-0123456789";
    private static final String READER = "gate-reader-token-0123456789";

    private static Path secret(Path dir, String name, String token) throws IOException {
        Path f = dir.resolve(name);
        Files.writeString(f, token + "\n");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        return f;
    }

    /** One request over the Unix socket; the whole answer (the request asks to close). */
    private static String overUnix(Path socket, String request) throws IOException {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            ByteBuffer out = ByteBuffer.wrap(request.getBytes(StandardCharsets.ISO_8859_1));
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

    /** One request over TLS, trusting only {@code ca}; the whole answer. */
    private static String overTls(URI base, Path ca, String request) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(ca)) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        try (SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket(base.getHost(), base.getPort())) {
            s.setSoTimeout(30_000);
            s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    private static String query(String token) {
        String body = "{\"namespace\": \"g\", \"keys\": [\"01\"]}";
        return "POST /cache/query HTTP/1.1\r\nHost: g\r\nConnection: close\r\nContent-Type: application/json\r\n"
                + (token == null ? "" : "Authorization: Bearer " + token + "\r\n")
                + "Content-Length: " + body.length() + "\r\n\r\n" + body;
    }

    @Test
    @DisplayName("OPS-5 issue 33: a Manager with --http-tls-cert-file, --http-unix-socket and --http-read-token-file serves"
            + " over TLS and the 0600 Unix socket, refuses reads without a token on both, removes the socket at SIGTERM")
    void tlsUnixSocketAndReadToken(@TempDir Path dir) throws Exception {
        Path certsDir = Files.createDirectories(dir.resolve("certs"));
        TestCerts certs = new TestCerts(certsDir);
        Path ca = certs.ca("ca");
        Path[] leaf = certs.leaf("manager", "ca");
        Path dram = Files.createDirectories(dir.resolve("dram"));
        Path run = Files.createDirectories(dir.resolve("run"));
        Files.setPosixFilePermissions(run, PosixFilePermissions.fromString("rwx------"));
        Path socket = run.resolve("http.sock");
        ManagerProcess m = ManagerProcess.start("listeners", dir.resolve("logs"), List.of("--standalone",
                "--http-listen", "127.0.0.1:0", "--dram", "8MiB", "--block-bytes-max", "1MiB", "--dram-dir", dram.toString(),
                "--http-tls-cert-file", leaf[0].toString(), "--http-tls-key-file", leaf[1].toString(),
                "--http-unix-socket", socket.toString(),
                "--http-token-file", secret(dir, "write.token", WRITER).toString(),
                "--http-read-token-file", secret(dir, "read.token", READER).toString()));
        try {
            assertThat(Files.getPosixFilePermissions(socket)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
            String health = "GET /health HTTP/1.1\r\nHost: g\r\nConnection: close\r\n\r\n";
            assertThat(overUnix(socket, health)).startsWith("HTTP/1.1 200");
            assertThat(overUnix(socket, query(null))).startsWith("HTTP/1.1 401").contains("UNAUTHORIZED");
            assertThat(overUnix(socket, query(READER))).startsWith("HTTP/1.1 200");

            URI base = URI.create(m.httpBase());
            assertThat(overTls(base, ca, health)).startsWith("HTTP/1.1 200");
            assertThat(overTls(base, ca, query(null))).startsWith("HTTP/1.1 401");
            assertThat(overTls(base, ca, query(WRITER))).as("a writer may read").startsWith("HTTP/1.1 200");

            m.sigterm();
            assertThat(m.awaitExit(Duration.ofSeconds(60))).as(m.stderrText()).isZero();
            assertThat(socket).as("the socket file is removed at shutdown").doesNotExist();
        } finally {
            m.close();
        }
    }
}
