package orbitkv.conformance.peer;

import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.nio.file.Path;
import java.util.Objects;
import javax.net.ssl.SSLException;

/**
 * The three PEM files of one peer mutual-TLS identity (issue 33): a certificate naming one node id as the URI SAN
 * {@code urn:orbitkv:node:<node-id>}, its PKCS#8 key, and the cluster CA that signs the peers. The adversarial peer
 * presents the certificate, verifies the other side against the CA (the requester also checks the target's host
 * name against the certificate's subject alternative names, as a Manager's channels do), and, as a source,
 * requires a client certificate signed by the CA, exactly as a Manager's peer listener does.
 *
 * @param certFile PEM certificate presented by this side
 * @param keyFile its PEM (PKCS#8) private key
 * @param caFile PEM CA bundle the other side's certificate must chain to
 */
public record PeerTlsFiles(Path certFile, Path keyFile, Path caFile) {
    public PeerTlsFiles {
        Objects.requireNonNull(certFile, "certFile");
        Objects.requireNonNull(keyFile, "keyFile");
        Objects.requireNonNull(caFile, "caFile");
    }

    /** The channel side: presents the certificate, verifies the server against the CA and its host name. */
    SslContext clientContext() throws SSLException {
        return GrpcSslContexts.forClient().trustManager(caFile.toFile()).keyManager(certFile.toFile(), keyFile.toFile()).build();
    }

    /** The listener side: presents the certificate, requires a client certificate signed by the CA. */
    SslContext serverContext() throws SSLException {
        return GrpcSslContexts.configure(SslContextBuilder.forServer(certFile.toFile(), keyFile.toFile()))
                .trustManager(caFile.toFile()).clientAuth(ClientAuth.REQUIRE).build();
    }
}
