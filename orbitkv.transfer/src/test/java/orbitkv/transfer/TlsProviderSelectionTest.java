package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import orbitkv.testing.TestCerts;
import orbitkv.transfer.frame.TlsContexts;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --transfer-tls-provider} (issue 33 deliver item 2, "OpenSSL or JDK provider"): the build ships netty-tcnative's
 * BoringSSL for linux-x86_64, so OpenSSL loads here; {@code auto} resolves to it, {@code jdk} and {@code openssl} are
 * taken as asked, and the data channel's contexts are built on the chosen provider.
 */
@Tag("unit")
class TlsProviderSelectionTest {
    @Test
    @DisplayName("issue 33: netty-tcnative (BoringSSL) loads on the module path of this build")
    void openSslLoads() {
        assertThat(OpenSsl.isAvailable()).as("OpenSSL unavailable: %s", OpenSsl.unavailabilityCause()).isTrue();
        assertThat(OpenSsl.versionString()).containsIgnoringCase("BoringSSL");
    }

    @Test
    @DisplayName("issue 33: auto = openssl when it loads, jdk and openssl as asked")
    void selection() {
        assertThat(TlsContexts.provider(TlsProvider.AUTO)).isEqualTo(OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK);
        assertThat(TlsContexts.provider(TlsProvider.JDK)).isEqualTo(SslProvider.JDK);
        assertThat(TlsContexts.provider(TlsProvider.OPENSSL)).isEqualTo(SslProvider.OPENSSL);
        assertThat(new DataChannelTls(Path.of("c"), Path.of("k"), Path.of("ca")).provider()).isEqualTo(TlsProvider.AUTO);
    }

    @Test
    @DisplayName("issue 33: the data channel's source and requester contexts run on the chosen provider")
    void contextsUseTheChosenProvider(@TempDir Path dir) throws Exception {
        TestCerts certs = new TestCerts(Files.createDirectories(dir.resolve("pki")));
        Path ca = certs.ca("ca");
        Path[] leaf = certs.leaf("node-a", "ca");
        for (TlsProvider p : new TlsProvider[] {TlsProvider.JDK, TlsProvider.OPENSSL}) {
            DataChannelTls tls = new DataChannelTls(leaf[0], leaf[1], ca, p);
            SslContext server = TlsContexts.server(tls);
            SslContext client = TlsContexts.client(tls);
            String expected = p == TlsProvider.JDK ? "Jdk" : "OpenSsl";
            assertThat(server.getClass().getSimpleName()).as("server context of %s", p).contains(expected);
            assertThat(client.getClass().getSimpleName()).as("client context of %s", p).contains(expected);
            io.netty.util.ReferenceCountUtil.release(server);
            io.netty.util.ReferenceCountUtil.release(client);
        }
    }
}
