package orbitkv.conformance.kit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import orbitkv.conformance.peer.PeerTlsFiles;
import orbitkv.inventory.PeerIdentity;

/**
 * The kit's peer mutual TLS ({@code --peer-tls-dir}, {@code --peer-tls-ca-file}; docs/conformance-kit.md "Peer TLS"):
 * under peer TLS a target admits an Open only from the node its caller's certificate names (issue 33), so the kit
 * holds one certificate per node id it speaks as: {@code DIR/<node-id>.pem} and {@code DIR/<node-id>.key} for
 * {@code <prefix>-src} (its listener's server certificate), {@code <prefix>-req-1} .. {@code -req-N} and
 * {@code <prefix>-req-unregistered} (the requester row that claims an unregistered node). Every file is checked
 * before the run starts: readable, and the certificate names exactly its node id.
 *
 * @param dir the directory of the per-member certificates and keys
 * @param caFile the cluster CA the target's certificate chains to
 */
record KitPeerTls(Path dir, Path caFile) {
    /** The requester node the {@code source/unknown_requester} row claims (never registered). */
    static final String UNREGISTERED = "req-unregistered";

    KitPeerTls {
        Objects.requireNonNull(dir, "--peer-tls-dir");
        Objects.requireNonNull(caFile, "--peer-tls-ca-file");
    }

    /** The files of node {@code nodeId}. */
    PeerTlsFiles files(String nodeId) {
        return new PeerTlsFiles(dir.resolve(nodeId + ".pem"), dir.resolve(nodeId + ".key"), caFile);
    }

    /** The node ids a run speaks as: the source, {@code requesters} kit requesters and the unregistered one. */
    static List<String> nodeIds(String prefix, int requesters) {
        List<String> ids = new ArrayList<>();
        ids.add(prefix + "-src");
        for (int i = 1; i <= requesters; i++) {
            ids.add(prefix + "-req-" + i);
        }
        ids.add(prefix + "-" + UNREGISTERED);
        return ids;
    }

    /**
     * Checks the CA and every member's files.
     *
     * @throws IllegalArgumentException naming the option and the file at fault
     */
    void check(List<String> nodeIds) {
        if (!Files.isRegularFile(caFile) || !Files.isReadable(caFile)) {
            throw new IllegalArgumentException("--peer-tls-ca-file " + caFile + " is not a readable file");
        }
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException("--peer-tls-dir " + dir + " is not a directory");
        }
        for (String node : nodeIds) {
            PeerTlsFiles f = files(node);
            if (!Files.isReadable(f.keyFile())) {
                throw new IllegalArgumentException("--peer-tls-dir " + dir + " has no readable " + f.keyFile().getFileName()
                        + " (the key of kit member " + node + ")");
            }
            X509Certificate x;
            try (InputStream in = Files.newInputStream(f.certFile())) {
                x = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
            } catch (IOException | CertificateException | ClassCastException e) {
                throw new IllegalArgumentException("--peer-tls-dir " + dir + " has no PEM certificate " + f.certFile().getFileName()
                        + " for kit member " + node + ": " + e.getMessage());
            }
            switch (PeerIdentity.of(x)) {
                case PeerIdentity.Named.Node n when n.nodeId().value().equals(node) -> { }
                case PeerIdentity.Named.Node n -> throw new IllegalArgumentException("--peer-tls-dir " + f.certFile()
                        + " names node " + n.nodeId() + ", not the kit member " + node);
                case PeerIdentity.Named.None none -> throw new IllegalArgumentException("--peer-tls-dir " + f.certFile()
                        + " does not name kit member " + node + ": " + none.why() + " (URI SAN " + PeerIdentity.URI_PREFIX + node + ")");
            }
        }
    }
}
