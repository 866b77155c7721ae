package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import orbitkv.inventory.Medium;
import orbitkv.testing.TestCerts;
import orbitkv.transfer.frame.DataFrames;
import orbitkv.transfer.frame.DataStatus;
import orbitkv.transfer.requester.GrantSecrets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 33: with TLS files the data channel is mutual TLS (docs/transfer.md "Transport security"): the engine READs
 * DRAM and SSD blocks over it, a plaintext client gets nothing, a client certificate of another member cannot READ a
 * grant even with its secret, and the engine does not read from a data endpoint whose certificate names another node.
 */
@Tag("unit")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DataChannelTlsTest {
    private static Path dir;
    private static Path ca;
    private static DataChannelTls source;
    private static DataChannelTls requester;
    private static DataChannelTls intruder;
    private static DataChannelTls impostorSource;
    private TransferFixture f;

    @BeforeAll
    static void certificates() throws Exception {
        dir = Files.createTempDirectory("orbitkv-data-tls-");
        TestCerts certs = new TestCerts(dir);
        ca = certs.ca("cluster-ca");
        source = tls(certs.leaf("source-a", "cluster-ca"));
        requester = tls(certs.leaf("requester-b", "cluster-ca"));
        intruder = tls(certs.leaf("intruder-c", "cluster-ca"));
        impostorSource = tls(certs.leaf("impostor", "cluster-ca", "someone-else"));
    }

    private static DataChannelTls tls(Path[] leaf) {
        return new DataChannelTls(leaf[0], leaf[1], ca);
    }

    @AfterAll
    static void removeCertificates() throws IOException {
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                Files.delete(p);
            }
        }
        Files.delete(dir);
    }

    @AfterEach
    void stop() throws IOException {
        if (f != null) {
            f.close();
        }
    }

    private ReadResult read(Grant g, int index, long size, Arena arena, MemorySegment[] out) {
        MemorySegment dst = TransferFixture.destination(arena, size);
        out[0] = dst;
        return TransferFixture.await(f.engine.read(g, index, Destination.of(dst), BackendPolicy.TCP_ONLY,
                Duration.ofSeconds(20)));
    }

    @Test
    @DisplayName("issue 33 the data channel is plaintext and unauthenticated under peer mTLS: with TLS files the engine READs DRAM and SSD blocks over mutual TLS; a plaintext READ gets no byte")
    void dataChannelPlaintextUnderPeerMtls() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()).withTls(source, requester));
        byte[] dram = TransferFixture.payload(3 << 20, 1, 1);
        byte[] ssd = TransferFixture.payload((1 << 20) + 17, 1, 2);
        long a = f.payloads.putDram(TransferFixture.key(1), dram);
        long b = f.payloads.putSsd(TransferFixture.key(2), ssd);
        Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, a),
                new BlockRef(TransferFixture.key(2), Medium.SSD, b)));
        try (Arena arena = Arena.ofShared()) {
            MemorySegment[] dst = new MemorySegment[1];
            assertThat(read(g, 0, dram.length, arena, dst)).isInstanceOf(ReadResult.Completed.class);
            assertThat(dst[0].toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).isEqualTo(dram);
            assertThat(read(g, 1, ssd.length, arena, dst)).as("an SSD block goes in chunks under TLS")
                    .isInstanceOf(ReadResult.Completed.class);
            assertThat(dst[0].toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).isEqualTo(ssd);
        }
        long c = f.payloads.putDram(TransferFixture.key(3), TransferFixture.payload(5000, 1, 3));
        Grant sniffed = f.grant(List.of(new BlockRef(TransferFixture.key(3), Medium.DRAM, c)));
        try (Socket plain = new Socket("127.0.0.1", f.source.boundDataAddress().getPort())) {
            plain.setSoTimeout(20_000);
            ByteBuf req = Unpooled.buffer(2 * DataFrames.REQUEST_BYTES);
            DataFrames.writeBind(req, sniffed.id(), GrantSecrets.secret(sniffed));
            DataFrames.writeRequest(req, sniffed.id(), 0, 1);
            OutputStream out = plain.getOutputStream();
            out.write(ByteBufUtilArray.of(req));
            out.flush();
            byte[] answer = readUntilClosed(plain.getInputStream());
            assertThat(answer.length < DataFrames.RESPONSE_HEADER_BYTES || answer[0] != 'O')
                    .as("no response header, let alone payload, for a plaintext client (got " + answer.length + " bytes)")
                    .isTrue();
        }
        assertThat(f.source.status().readsServed().getOrDefault(PeerRouteClass.PEER_DRAM, 0L)).as("only the TLS READ").isEqualTo(1);
    }

    @Test
    @DisplayName("issue 33 under TLS a READ is served only to the certificate the grant was issued to: another member's certificate with the right secret gets PEER_IDENTITY_MISMATCH and is closed")
    void grantServedOnlyToItsRequestersCertificate() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()).withTls(source, requester));
        long a = f.payloads.putDram(TransferFixture.key(1), TransferFixture.payload(5000, 1, 1));
        Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, a)));
        try (SSLSocket s = (SSLSocket) context(intruder).getSocketFactory().createSocket("127.0.0.1",
                f.source.boundDataAddress().getPort())) {
            s.setSoTimeout(20_000);
            s.startHandshake();
            ByteBuf req = Unpooled.buffer(2 * DataFrames.REQUEST_BYTES);
            DataFrames.writeBind(req, g.id(), GrantSecrets.secret(g));
            DataFrames.writeRequest(req, g.id(), 0, 1);
            s.getOutputStream().write(ByteBufUtilArray.of(req));
            s.getOutputStream().flush();
            byte[] h = s.getInputStream().readNBytes(DataFrames.RESPONSE_HEADER_BYTES);
            assertThat(DataFrames.readResponseHeader(h).status()).isEqualTo(DataStatus.PEER_IDENTITY_MISMATCH);
            assertThat(readUntilClosed(s.getInputStream())).as("closed; the READ behind it not served").isEmpty();
        }
        assertThat(f.source.status().dataRefusals()).containsEntry(DataRefusal.PEER_IDENTITY_MISMATCH, 1L);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment[] dst = new MemorySegment[1];
            assertThat(read(g, 0, 5000, arena, dst)).as("the block stays readable by its requester")
                    .isInstanceOf(ReadResult.Completed.class);
        }
    }

    @Test
    @DisplayName("issue 33 the engine reads nothing from a data endpoint whose certificate names another node than the grant's source")
    void engineChecksTheSourcesCertificate() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()).withTls(impostorSource, requester));
        long a = f.payloads.putDram(TransferFixture.key(1), TransferFixture.payload(5000, 1, 1));
        Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, a)));
        try (Arena arena = Arena.ofShared()) {
            MemorySegment[] dst = new MemorySegment[1];
            ReadResult o = read(g, 0, 5000, arena, dst);
            assertThat(o).isInstanceOfSatisfying(ReadResult.Failed.class, x -> assertThat(x.detail())
                    .contains("names node someone-else"));
        }
        assertThat(f.source.status().readsServed().getOrDefault(PeerRouteClass.PEER_DRAM, 0L)).isZero();
    }

    @Test
    @DisplayName("issue 37 item 5 under TLS the engine asks later grants with AUTHORIZE on its mutual-TLS data connection and READs them there")
    void authorizeOnTheDataChannelUnderTls() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()).withTls(source, requester));
        try (Arena arena = Arena.ofShared()) {
            for (int i = 1; i <= 2; i++) {
                byte[] bytes = TransferFixture.payload(5000, 1, i);
                long seq = f.payloads.putDram(TransferFixture.key(i), bytes);
                Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(i), Medium.DRAM, seq)));
                MemorySegment[] dst = new MemorySegment[1];
                assertThat(read(g, 0, 5000, arena, dst)).isInstanceOf(ReadResult.Completed.class);
                assertThat(dst[0].toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).isEqualTo(bytes);
            }
        }
        assertThat(f.engine.status().authorizesOnDataChannel()).as("the second grant").isEqualTo(1);
        assertThat(f.engine.status().dataChannelAuthorizeFallbacks()).isZero();
    }

    @Test
    @DisplayName("issue 37 item 5 under TLS an AUTHORIZE claiming another requester than the connection's certificate names is refused REQUESTER_IDENTITY_MISMATCH; nothing is pinned")
    void authorizeFromAnotherCertificateIsRefused() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()).withTls(source, requester));
        long a = f.payloads.putDram(TransferFixture.key(1), TransferFixture.payload(5000, 1, 1));
        byte[] body = GrantSecrets.authorizeRequest(f.request(Intent.FOREGROUND,
                List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, a))), f.requesterIncarnation, f.cluster);
        try (SSLSocket s = (SSLSocket) context(intruder).getSocketFactory().createSocket("127.0.0.1",
                f.source.boundDataAddress().getPort())) {
            s.setSoTimeout(20_000);
            s.startHandshake();
            ByteBuf req = Unpooled.buffer(DataFrames.REQUEST_BYTES + body.length);
            DataFrames.writeAuthorize(req, body.length, 5);
            req.writeBytes(body);
            s.getOutputStream().write(ByteBufUtilArray.of(req));
            s.getOutputStream().flush();
            DataFrames.ResponseHeader h = DataFrames.readResponseHeader(
                    s.getInputStream().readNBytes(DataFrames.RESPONSE_HEADER_BYTES));
            assertThat(h.status()).isEqualTo(DataStatus.OK);
            assertThat(h.readId()).isEqualTo(5);
            orbitkv.transfer.wire.AuthorizeResponse r = orbitkv.transfer.wire.AuthorizeResponse.parseFrom(
                    s.getInputStream().readNBytes((int) h.length()));
            assertThat(r.getRefused().getReason())
                    .isEqualTo(orbitkv.transfer.wire.RefusalReason.REQUESTER_IDENTITY_MISMATCH);
        }
        assertThat(f.source.status().pinsHeld()).isZero();
        assertThat(f.source.status().grantsIssued()).isZero();
    }

    private static byte[] readUntilClosed(InputStream in) {
        java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
        byte[] b = new byte[4096];
        try {
            int n;
            while ((n = in.read(b)) >= 0) {
                got.write(b, 0, n);
            }
        } catch (IOException reset) {
            // reset or handshake failure: closed as well
        }
        return got.toByteArray();
    }

    /** A JDK client context presenting {@code who}'s certificate and trusting the cluster CA. */
    private static SSLContext context(DataChannelTls who) throws Exception {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        Certificate cert;
        Certificate caCert;
        try (InputStream in = Files.newInputStream(who.certFile()); InputStream cin = Files.newInputStream(ca)) {
            cert = cf.generateCertificate(in);
            caCert = cf.generateCertificate(cin);
        }
        String pem = Files.readString(who.keyFile()).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        PrivateKey key = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("me", key, new char[0], new Certificate[] {cert});
        ks.setCertificateEntry("ca", caCert);
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, new char[0]);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext c = SSLContext.getInstance("TLS");
        c.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return c;
    }

    /** The readable bytes of a buffer as an array. */
    private static final class ByteBufUtilArray {
        static byte[] of(ByteBuf b) {
            byte[] a = new byte[b.readableBytes()];
            b.readBytes(a);
            return a;
        }
    }
}
