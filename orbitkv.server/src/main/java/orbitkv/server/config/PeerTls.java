package orbitkv.server.config;

import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslProvider;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import orbitkv.inventory.PeerIdentity;
import orbitkv.membership.NodeId;
import orbitkv.transfer.TlsProvider;

/**
 * Mutual TLS of the peer gRPC listener and of this Manager's peer channels ({@code --peer-tls-cert-file},
 * {@code --peer-tls-key-file}, {@code --peer-tls-ca-file}; docs/operations.md, security posture). One
 * certificate serves both directions: the listener presents it and requires a client certificate signed by
 * the CA; every channel to a peer presents it and verifies the peer's certificate against the CA and the
 * peer's advertised host (its member record endpoint must be in the certificate's subject alternative names).
 *
 * <p>Both SSL contexts are built by {@link #load} during configuration validation, so an unreadable file, a
 * malformed PEM or a key that does not match its certificate refuses the start before any side effect.
 *
 * <p>Member identity (issue 33): the certificate must name this Manager's {@code --node-id} as its URI subject
 * alternative name {@code urn:orbitkv:node:<node-id>} ({@link PeerIdentity}); a certificate that names another node,
 * two nodes or none refuses the start, naming both options. The peer listener then refuses any caller that claims
 * another node than its certificate names, and the transfer data channel runs TLS with the same three files
 * ({@link #certFile()}, {@link #keyFile()}, {@link #caFile()}).
 */
public final class PeerTls {
    private final Path certFile;
    private final Path keyFile;
    private final Path caFile;
    private final SslContext server;
    private final SslContext client;

    private PeerTls(Path certFile, Path keyFile, Path caFile, SslContext server, SslContext client) {
        this.certFile = certFile;
        this.keyFile = keyFile;
        this.caFile = caFile;
        this.server = server;
        this.client = client;
    }

    /**
     * Reads and checks the three PEM files.
     *
     * @throws ConfigException naming the option whose file is at fault
     */
    public static PeerTls load(Path certFile, Path keyFile, Path caFile, NodeId nodeId) {
        return load(certFile, keyFile, caFile, nodeId, sslProvider(TlsProvider.AUTO));
    }

    /**
     * Reads and checks the three PEM files; both contexts run on {@code provider} ({@code --transfer-tls-provider}).
     *
     * @throws ConfigException naming the option whose file is at fault
     */
    public static PeerTls load(Path certFile, Path keyFile, Path caFile, NodeId nodeId, SslProvider provider) {
        Objects.requireNonNull(certFile, "certFile");
        Objects.requireNonNull(keyFile, "keyFile");
        Objects.requireNonNull(caFile, "caFile");
        readable(Setting.PEER_TLS_CERT_FILE, certFile);
        readable(Setting.PEER_TLS_KEY_FILE, keyFile);
        readable(Setting.PEER_TLS_CA_FILE, caFile);
        File cert = certFile.toFile();
        File key = keyFile.toFile();
        File ca = caFile.toFile();
        requireNamesNode(certFile, Objects.requireNonNull(nodeId, "nodeId"));
        try {
            GrpcSslContexts.forClient().trustManager(ca).build();
        } catch (Exception e) {
            throw new ConfigException(Setting.PEER_TLS_CA_FILE.flag() + " " + caFile + " holds no usable PEM CA certificate: "
                    + e.getMessage());
        }
        try {
            SslContext server = GrpcSslContexts.configure(SslContextBuilder.forServer(cert, key), provider)
                    .trustManager(ca).clientAuth(ClientAuth.REQUIRE).build();
            SslContext client = GrpcSslContexts.configure(SslContextBuilder.forClient(), provider).trustManager(ca)
                    .keyManager(cert, key).build();
            return new PeerTls(certFile, keyFile, caFile, server, client);
        } catch (Exception e) {
            throw new ConfigException(Setting.PEER_TLS_CERT_FILE.flag() + " " + certFile + " and "
                    + Setting.PEER_TLS_KEY_FILE.flag() + " " + keyFile
                    + " must be a PEM certificate and its PEM (PKCS#8) private key: " + e.getMessage());
        }
    }

    /** The certificate's {@code urn:orbitkv:node:} URI SAN must name {@code nodeId} (issue 33). */
    private static void requireNamesNode(Path certFile, NodeId nodeId) {
        X509Certificate x;
        try (InputStream in = java.nio.file.Files.newInputStream(certFile)) {
            x = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        } catch (IOException | CertificateException | ClassCastException e) {
            throw new ConfigException(Setting.PEER_TLS_CERT_FILE.flag() + " " + certFile
                    + " holds no PEM X.509 certificate: " + e.getMessage());
        }
        switch (PeerIdentity.of(x)) {
            case PeerIdentity.Named.Node n when n.nodeId().equals(nodeId) -> { }
            case PeerIdentity.Named.Node n -> throw new ConfigException(Setting.PEER_TLS_CERT_FILE.flag() + " " + certFile
                    + " names node " + n.nodeId() + " (URI SAN " + PeerIdentity.URI_PREFIX + n.nodeId() + "), but "
                    + Setting.NODE_ID.flag() + " is " + nodeId + ": a member's certificate must name its own node id");
            case PeerIdentity.Named.None none -> throw new ConfigException(Setting.PEER_TLS_CERT_FILE.flag() + " "
                    + certFile + " does not name " + Setting.NODE_ID.flag() + " " + nodeId + ": " + none.why()
                    + "; give the certificate the URI SAN " + PeerIdentity.URI_PREFIX + nodeId);
        }
    }

    /** The Netty provider {@code --transfer-tls-provider} resolves to on this host (what the Manager logs at start). */
    public static SslProvider sslProvider(TlsProvider p) {
        return switch (p) {
            case JDK -> SslProvider.JDK;
            case OPENSSL -> SslProvider.OPENSSL;
            case AUTO -> OpenSsl.isAvailable() ? SslProvider.OPENSSL
                    : SslProvider.JDK;
        };
    }

    static void readable(Setting option, Path file) {
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw new ConfigException(option.flag() + " " + file + " is not a readable file");
        }
    }

    /** The listener's context: presents this certificate, requires a client certificate signed by the CA. */
    public SslContext serverContext() {
        return server;
    }

    /** The channels' context: presents this certificate, verifies the peer against the CA. */
    public SslContext clientContext() {
        return client;
    }

    /** {@code --peer-tls-cert-file}: the transfer data channel presents it too. */
    public Path certFile() {
        return certFile;
    }

    /** {@code --peer-tls-key-file}. */
    public Path keyFile() {
        return keyFile;
    }

    /** {@code --peer-tls-ca-file}. */
    public Path caFile() {
        return caFile;
    }

    @Override
    public String toString() {
        return "PeerTls[cert=" + certFile + ", key=" + keyFile + ", ca=" + caFile + "]";
    }
}
