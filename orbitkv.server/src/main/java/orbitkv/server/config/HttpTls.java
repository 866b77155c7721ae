package orbitkv.server.config;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * TLS of the HTTP API listener ({@code --http-tls-cert-file}, {@code --http-tls-key-file}, optionally
 * {@code --http-tls-client-ca-file}; issue 33, docs/operations.md security posture): the listener speaks TLS
 * only, presenting this certificate; with a client CA it requires a client certificate signed by it. HTTP/1.1
 * over Netty's {@code SslHandler}, the same handler and limits as plaintext.
 *
 * <p>The SSL context is built by {@link #load} during configuration validation, so an unreadable file, a
 * malformed PEM or a key that does not match its certificate refuses the start before any side effect.
 */
public final class HttpTls {
    private final Path certFile;
    private final Path keyFile;
    private final Optional<Path> clientCaFile;
    private final SslContext server;

    private HttpTls(Path certFile, Path keyFile, Optional<Path> clientCaFile, SslContext server) {
        this.certFile = certFile;
        this.keyFile = keyFile;
        this.clientCaFile = clientCaFile;
        this.server = server;
    }

    /**
     * Reads and checks the PEM files.
     *
     * @throws ConfigException naming the option whose file is at fault
     */
    public static HttpTls load(Path certFile, Path keyFile, Optional<Path> clientCaFile) {
        Objects.requireNonNull(certFile, "certFile");
        Objects.requireNonNull(keyFile, "keyFile");
        Objects.requireNonNull(clientCaFile, "clientCaFile");
        PeerTls.readable(Setting.HTTP_TLS_CERT_FILE, certFile);
        PeerTls.readable(Setting.HTTP_TLS_KEY_FILE, keyFile);
        clientCaFile.ifPresent(ca -> PeerTls.readable(Setting.HTTP_TLS_CLIENT_CA_FILE, ca));
        SslContextBuilder builder;
        try {
            builder = SslContextBuilder.forServer(certFile.toFile(), keyFile.toFile());
        } catch (Exception e) {
            throw new ConfigException(Setting.HTTP_TLS_CERT_FILE.flag() + " " + certFile + " and "
                    + Setting.HTTP_TLS_KEY_FILE.flag() + " " + keyFile
                    + " must be a PEM certificate and its PEM (PKCS#8) private key: " + e.getMessage());
        }
        if (clientCaFile.isPresent()) {
            try {
                builder.trustManager(clientCaFile.get().toFile()).clientAuth(ClientAuth.REQUIRE);
            } catch (Exception e) {
                throw new ConfigException(Setting.HTTP_TLS_CLIENT_CA_FILE.flag() + " " + clientCaFile.get()
                        + " holds no usable PEM CA certificate: " + e.getMessage());
            }
        }
        try {
            return new HttpTls(certFile, keyFile, clientCaFile, builder.build());
        } catch (Exception e) {
            throw new ConfigException(Setting.HTTP_TLS_CERT_FILE.flag() + " " + certFile + " and "
                    + Setting.HTTP_TLS_KEY_FILE.flag() + " " + keyFile
                    + " must be a PEM certificate and its PEM (PKCS#8) private key: " + e.getMessage());
        }
    }

    /** The listener's context: presents this certificate; with a client CA, requires a client certificate. */
    public SslContext serverContext() {
        return server;
    }

    /** True iff clients must present a certificate signed by {@code --http-tls-client-ca-file}. */
    public boolean clientCertificates() {
        return clientCaFile.isPresent();
    }

    @Override
    public String toString() {
        return "HttpTls[cert=" + certFile + ", key=" + keyFile + ", clientCa=" + clientCaFile.map(Path::toString).orElse("none") + "]";
    }
}
