package orbitkv.membership.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.ssl.NotSslRecordException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** How {@link EtcdTlsProbe} reads a handshake failure (issue 33: name the cause, not "timed out"). */
@Tag("unit")
class EtcdTlsProbeTest {
    @Test
    @DisplayName("issue 33 the JDK's own PKIX failure, reported as '(certificate_unknown)', is read as the server certificate not verifying against the CA file")
    void pkixIsTheCaFile() {
        var e = new SSLHandshakeException("(certificate_unknown) PKIX path building failed: unable to find valid certification path to requested target");
        assertThat(EtcdTlsProbe.describe(e, false)).startsWith("the etcd server's certificate does not verify against --etcd-ca-file: ")
                .contains("PKIX path building failed");
    }

    @Test
    @DisplayName("issue 33 a fatal alert from etcd (before or after the client's Finished) is read as etcd refusing the client certificate")
    void alertIsTheClientCertificate() {
        var e = new IllegalStateException(new SSLHandshakeException("(bad_certificate) Received fatal alert: bad_certificate"));
        assertThat(EtcdTlsProbe.describe(e, false)).startsWith("etcd refused this client's certificate");
        assertThat(EtcdTlsProbe.describe(new SSLHandshakeException("closed"), true)).startsWith("etcd refused this client's certificate");
    }

    @Test
    @DisplayName("issue 33 a non-TLS answer is read as a plaintext server behind https://; an expiry as an expired certificate")
    void plaintextAndExpiry() {
        assertThat(EtcdTlsProbe.describe(new NotSslRecordException("not an SSL/TLS record: 485454502f312e31"), false))
                .startsWith("the endpoint does not speak TLS");
        assertThat(EtcdTlsProbe.describe(new SSLHandshakeException("PKIX path validation failed: validity check failed"), false))
                .startsWith("a certificate is expired or not yet valid");
    }
}
