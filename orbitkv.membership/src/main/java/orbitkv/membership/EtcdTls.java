package orbitkv.membership;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Client TLS toward etcd (docs/operations.md, security posture): the CA bundle that signs the etcd servers'
 * certificates, and this client's certificate and PKCS#8 private key (PEM files) for etcd's
 * {@code --client-cert-auth}. Used only with {@code https://} endpoints.
 *
 * @param caFile PEM CA certificate(s) trusted for the etcd servers
 * @param certFile PEM client certificate chain
 * @param keyFile PEM PKCS#8 private key of {@code certFile}
 */
public record EtcdTls(Path caFile, Path certFile, Path keyFile) {
    public EtcdTls {
        Objects.requireNonNull(caFile, "etcd TLS CA file must not be null");
        Objects.requireNonNull(certFile, "etcd TLS client certificate file must not be null");
        Objects.requireNonNull(keyFile, "etcd TLS client key file must not be null");
    }
}
