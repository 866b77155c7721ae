package orbitkv.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Throwaway certificates for TLS tests, made by the {@code openssl} command line in a temporary directory
 * (nothing is committed): a CA, and leaf certificates it signs for {@code 127.0.0.1} / {@code localhost}
 * usable as server and client certificates. Keys are PKCS#8 PEM (EC P-256). A leaf names its member node id as the
 * URI SAN {@code urn:orbitkv:node:<node-id>} (issue 33: peer certificates bind member identity).
 *
 * <p>The one copy for every module's tests (issue 34 item 6; conformance, orbitkv.server and orbitkv.transfer each
 * had their own).
 */
public final class TestCerts {
    private final Path dir;

    public TestCerts(Path dir) {
        this.dir = dir;
    }

    /** A new self-signed CA {@code name}: returns its certificate; the key stays beside it. */
    public Path ca(String name) throws IOException, InterruptedException {
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                dir.resolve(name + ".key").toString(), "-out", dir.resolve(name + ".pem").toString(), "-days", "2",
                "-subj", "/CN=" + name);
        return dir.resolve(name + ".pem");
    }

    /** A leaf {@code name} signed by CA {@code ca} naming node id {@code name}: returns {cert, key}. */
    public Path[] leaf(String name, String ca) throws IOException, InterruptedException {
        return leaf(name, ca, name);
    }

    /** A leaf {@code name} signed by CA {@code ca} naming node id {@code nodeId} (none when null): returns {cert, key}. */
    public Path[] leaf(String name, String ca, String nodeId) throws IOException, InterruptedException {
        Path key = dir.resolve(name + ".key");
        Path csr = dir.resolve(name + ".csr");
        Path cert = dir.resolve(name + ".pem");
        Path ext = dir.resolve(name + ".ext");
        Files.writeString(ext, "subjectAltName=IP:127.0.0.1,DNS:localhost" + (nodeId == null ? "" : ",URI:urn:orbitkv:node:" + nodeId)
                + "\nextendedKeyUsage=serverAuth,clientAuth\n");
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key.toString(),
                "-out", csr.toString(), "-subj", "/CN=" + name);
        openssl("x509", "-req", "-in", csr.toString(), "-CA", dir.resolve(ca + ".pem").toString(), "-CAkey",
                dir.resolve(ca + ".key").toString(), "-CAcreateserial", "-out", cert.toString(), "-days", "2",
                "-extfile", ext.toString());
        return new Path[] {cert, key};
    }

    private void openssl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add("openssl");
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("openssl " + String.join(" ", args) + " failed: " + new String(out));
        }
    }
}
