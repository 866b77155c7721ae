package orbitkv.transfer;

import java.nio.file.Path;
import java.util.Objects;

/**
 * TLS of the transfer data channel (issue 33; docs/transfer.md "Transport security"): the member's PEM certificate,
 * its PEM (PKCS#8) private key, and the PEM CA certificate(s) that sign every member's certificate. The Manager
 * passes its peer mutual-TLS files ({@code --peer-tls-*}), so the data channel is authenticated and encrypted exactly
 * when the peer gRPC listener is. Both ends present their certificate and verify the other's against the CA; the
 * source requires a client certificate and serves a grant only to a connection whose certificate names the grant's
 * requester node ({@code urn:orbitkv:node:<node-id>}, {@code orbitkv.inventory.PeerIdentity}); the requester
 * checks that the source's certificate names the source node it asked.
 *
 * @param certFile this member's certificate (PEM)
 * @param keyFile its private key (PEM, PKCS#8)
 * @param caFile the cluster CA certificate(s) (PEM)
 * @param provider the TLS implementation both ends' contexts use ({@code --transfer-tls-provider})
 */
public record DataChannelTls(Path certFile, Path keyFile, Path caFile, TlsProvider provider) {
    public DataChannelTls {
        Objects.requireNonNull(certFile, "certFile");
        Objects.requireNonNull(keyFile, "keyFile");
        Objects.requireNonNull(caFile, "caFile");
        Objects.requireNonNull(provider, "provider");
    }

    /** The three files with {@link TlsProvider#AUTO}. */
    public DataChannelTls(Path certFile, Path keyFile, Path caFile) {
        this(certFile, keyFile, caFile, TlsProvider.AUTO);
    }
}
