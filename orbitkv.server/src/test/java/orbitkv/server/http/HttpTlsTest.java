package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import orbitkv.server.incarnation.StandaloneMetadata;
import orbitkv.inventory.Scope;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.server.config.HttpTls;
import orbitkv.server.config.ListenAddress;
import orbitkv.server.net.NativeTransport;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import orbitkv.testing.RawConnection;
import orbitkv.testing.RawHttp;
import orbitkv.testing.TestCerts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 33: optional TLS on the HTTP API listener ({@code --http-tls-cert-file}, {@code --http-tls-key-file},
 * {@code --http-tls-client-ca-file}) with Netty's SslHandler in front of the same handler and limits.
 * Throwaway certificates from the {@code openssl} command line ({@link TestCerts}).
 */
@Tag("unit")
class HttpTlsTest {
    @TempDir
    Path dir;

    private LocalTiers tiers;
    private HttpApiServer server;

    private InetSocketAddress start(HttpTls tls) throws Exception {
        ResidencySequence sequence = new ResidencySequence();
        tiers = new LocalTiers(DramTier.open(dir, 4 << 20, 64, sequence), null, sequence);
        server = HttpApiServer.start(new ListenAddress("127.0.0.1", 0), NativeTransport.detect(), tiers,
                new StandaloneMetadata(null, Incarnation.random(new NodeId("n1"), new NodeEpoch(1)), Scope.all()),
                TestLimits.small(), tls.serverContext());
        return server.boundAddress();
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

    /** A JDK client context trusting {@code ca}, presenting {@code leaf} (cert, key) when given. */
    private static SSLContext client(Path ca, Path[] leaf) throws Exception {
        SslContextBuilder b = SslContextBuilder.forClient().sslProvider(SslProvider.JDK).trustManager(ca.toFile());
        if (leaf != null) {
            b.keyManager(leaf[0].toFile(), leaf[1].toFile());
        }
        return ((JdkSslContext) b.build()).context();
    }

    private static RawHttp.Response getHealth(SSLContext context, InetSocketAddress address) throws IOException {
        SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(address.getAddress(), address.getPort());
        try (RawConnection c = new RawConnection(socket)) {
            socket.startHandshake();
            return c.write("GET /health HTTP/1.1\r\nHost: t\r\n\r\n").read();
        }
    }

    @Test
    @DisplayName("OPS-5 issue 33: with --http-tls-cert-file/--http-tls-key-file the HTTP API answers over TLS (a CA-verified"
            + " certificate for 127.0.0.1) and a plaintext request gets no HTTP answer")
    void tlsListener() throws Exception {
        TestCerts certs = new TestCerts(dir);
        Path ca = certs.ca("ca");
        Path[] leaf = certs.leaf("manager", "ca");
        InetSocketAddress address = start(HttpTls.load(leaf[0], leaf[1], Optional.empty()));
        RawHttp.Response r = getHealth(client(ca, null), address);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.text()).contains("\"tiers\"");
        try (RawConnection plain = new RawConnection(address)) {
            plain.write("GET /health HTTP/1.1\r\nHost: t\r\n\r\n");
            assertThatThrownBy(plain::read).as("plaintext on the TLS port").isInstanceOf(Exception.class);
        }
        Path otherCa = certs.ca("other");
        assertThatThrownBy(() -> getHealth(client(otherCa, null), address)).as("a client not trusting the CA")
                .isInstanceOf(IOException.class);
    }

    @Test
    @DisplayName("OPS-5 issue 33: with --http-tls-client-ca-file a client must present a certificate the CA signed")
    void clientCertificates() throws Exception {
        TestCerts certs = new TestCerts(dir);
        Path ca = certs.ca("ca");
        Path[] leaf = certs.leaf("manager", "ca");
        Path[] engine = certs.leaf("engine", "ca");
        certs.ca("rogue");
        Path[] rogue = certs.leaf("rogue-engine", "rogue");
        InetSocketAddress address = start(HttpTls.load(leaf[0], leaf[1], Optional.of(ca)));
        assertThat(getHealth(client(ca, engine), address).status()).isEqualTo(200);
        assertThatThrownBy(() -> getHealth(client(ca, null), address)).as("no client certificate")
                .isInstanceOf(IOException.class);
        assertThatThrownBy(() -> getHealth(client(ca, rogue), address)).as("a client certificate of another CA")
                .isInstanceOf(IOException.class);
    }
}
