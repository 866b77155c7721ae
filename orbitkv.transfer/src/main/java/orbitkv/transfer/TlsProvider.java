package orbitkv.transfer;

/**
 * Which TLS implementation the data channel (and the Manager's peer gRPC TLS) runs on ({@code --transfer-tls-provider};
 * issue 33, docs/security.md). OpenSSL is netty-tcnative's statically linked BoringSSL, shipped in the image for
 * linux-x86_64; the JDK provider is the JDK's own JSSE.
 */
public enum TlsProvider {
    /** OpenSSL when netty-tcnative loads on this host, else the JDK's. */
    AUTO,
    /** The JDK's JSSE provider. */
    JDK,
    /** netty-tcnative (BoringSSL); the Manager refuses to start when it does not load. */
    OPENSSL
}
