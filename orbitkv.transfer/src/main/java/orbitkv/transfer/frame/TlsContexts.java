package orbitkv.transfer.frame;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import java.util.List;
import javax.net.ssl.SSLException;
import orbitkv.transfer.DataChannelTls;
import orbitkv.transfer.TlsProvider;

/**
 * Netty SSL contexts of the data channel, built once from {@link DataChannelTls}. The provider is the one
 * {@link DataChannelTls#provider()} names: {@code AUTO} is OpenSSL (netty-tcnative's BoringSSL, shipped for
 * linux-x86_64) when it loads, else the JDK's (docs/results/2026-12-03-data-channel-tls.md measures both).
 */
public final class TlsContexts {
    private TlsContexts() {}

    /** The provider {@code AUTO} resolves to on this host. */
    public static SslProvider provider() {
        return provider(TlsProvider.AUTO);
    }

    /**
     * The Netty provider of {@code choice}: {@code AUTO} is OpenSSL when {@link OpenSsl#isAvailable()}, else the JDK's.
     *
     * @throws IllegalStateException for {@code OPENSSL} when netty-tcnative does not load, naming the cause
     */
    public static SslProvider provider(TlsProvider choice) {
        return switch (choice) {
            case AUTO -> OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
            case JDK -> SslProvider.JDK;
            case OPENSSL -> {
                if (!OpenSsl.isAvailable()) {
                    throw new IllegalStateException("the OpenSSL TLS provider (netty-tcnative) does not load: "
                            + OpenSsl.unavailabilityCause());
                }
                yield SslProvider.OPENSSL;
            }
        };
    }

    /**
     * TLS 1.3 suites, AES-128-GCM first: bulk payload is the data channel's whole load, and AES-128 costs less per
     * byte than the JDK's default first choice, AES-256 (docs/performance.md "Data channel TLS").
     */
    static final List<String> CIPHERS = List.of("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
            "TLS_CHACHA20_POLY1305_SHA256");

    /** The source's context: presents the member certificate, requires a client certificate signed by the CA. */
    public static SslContext server(DataChannelTls tls) throws SSLException {
        return SslContextBuilder.forServer(tls.certFile().toFile(), tls.keyFile().toFile()).sslProvider(provider(tls.provider()))
                .protocols("TLSv1.3").ciphers(CIPHERS, SupportedCipherSuiteFilter.INSTANCE)
                .trustManager(tls.caFile().toFile()).clientAuth(ClientAuth.REQUIRE).build();
    }

    /** The requester's context: presents the member certificate, verifies the source's against the CA. */
    public static SslContext client(DataChannelTls tls) throws SSLException {
        // No host name check: a data endpoint may be advertised under another name (--transfer-data-advertise); the
        // requester checks instead that the certificate names the source node it asked (PeerIdentity), a stronger rule.
        return SslContextBuilder.forClient().sslProvider(provider(tls.provider())).protocols("TLSv1.3")
                .ciphers(CIPHERS, SupportedCipherSuiteFilter.INSTANCE).trustManager(tls.caFile().toFile())
                .keyManager(tls.certFile().toFile(), tls.keyFile().toFile()).endpointIdentificationAlgorithm(null).build();
    }
}
