package orbitkv.server.config;

import static orbitkv.server.config.Setting.*;

import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import orbitkv.membership.NodeId;
import orbitkv.transfer.TlsProvider;

/**
 * The parsing of the listener options that name files and sockets (issue 33): the HTTP listener's TLS, its Unix
 * socket and the socket's mode, and the peer listener's mutual TLS. Files are read and checked here; a missing partner
 * option or an unsafe path is a {@link ConfigException} naming the options.
 */
final class ListenerOptions {
    /** A Unix socket address holds 107 path bytes; the socket is first bound in a fresh directory beside its path. */
    private static final int UNIX_SOCKET_PATH_BYTES_MAX = 107;
    private static final int UNIX_SOCKET_STAGING_BYTES = 28;

    private ListenerOptions() {}

    static Path path(RawValues v, Setting s) {
        return v.given(s) ? Path.of(v.text(s)) : null;
    }

    /**
     * The HTTP listener's TLS (issue 33): certificate and key together or neither; a client CA only with them
     * (BND-6). The files are read and checked here.
     */
    static Optional<HttpTls> httpTls(RawValues v) {
        boolean cert = v.given(HTTP_TLS_CERT_FILE);
        boolean key = v.given(HTTP_TLS_KEY_FILE);
        SettingRelations.require(cert == key, "--http-tls-cert-file and --http-tls-key-file go together: "
                + (cert ? "--http-tls-key-file" : "--http-tls-cert-file") + " missing");
        SettingRelations.require(cert || !v.given(HTTP_TLS_CLIENT_CA_FILE), "--http-tls-client-ca-file requires --http-tls-cert-file"
                + " and --http-tls-key-file: client certificates exist only over TLS");
        if (!cert) {
            return Optional.empty();
        }
        return Optional.of(HttpTls.load(path(v, HTTP_TLS_CERT_FILE), path(v, HTTP_TLS_KEY_FILE),
                Optional.ofNullable(path(v, HTTP_TLS_CLIENT_CA_FILE))));
    }

    /**
     * {@code --http-unix-socket} (issue 33): an existing directory that others cannot write (they could replace
     * the socket), a path short enough for a socket address, staging included.
     */
    static Optional<Path> unixSocket(RawValues v) {
        if (!v.given(HTTP_UNIX_SOCKET)) {
            return Optional.empty();
        }
        String option = HTTP_UNIX_SOCKET.flag() + " " + v.text(HTTP_UNIX_SOCKET);
        Path path = Path.of(v.text(HTTP_UNIX_SOCKET)).toAbsolutePath().normalize();
        Path dir = path.getParent();
        SettingRelations.require(dir != null && java.nio.file.Files.isDirectory(dir), option + ": its directory does not exist");
        int dirBytes = dir.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        SettingRelations.require(path.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= UNIX_SOCKET_PATH_BYTES_MAX
                && dirBytes + UNIX_SOCKET_STAGING_BYTES <= UNIX_SOCKET_PATH_BYTES_MAX, option + ": a Unix socket path holds "
                + UNIX_SOCKET_PATH_BYTES_MAX + " bytes; its directory may have at most "
                + (UNIX_SOCKET_PATH_BYTES_MAX - UNIX_SOCKET_STAGING_BYTES) + " (the socket is bound beside it first)");
        try {
            Set<PosixFilePermission> perms = java.nio.file.Files.getPosixFilePermissions(dir);
            SettingRelations.require(!perms.contains(PosixFilePermission.OTHERS_WRITE), option + ": its directory " + dir
                    + " is writable by others (" + java.nio.file.attribute.PosixFilePermissions.toString(perms)
                    + "), who could replace the socket: use a directory of the Manager's user (e.g. /run/orbitkv)");
        } catch (java.io.IOException | UnsupportedOperationException e) {
            throw new ConfigException(option + ": the permissions of its directory cannot be read: " + e);
        }
        return Optional.of(path);
    }

    /** {@code --http-unix-socket-mode}: three octal digits (a leading 0 allowed), nothing for others. */
    static Set<PosixFilePermission> unixSocketMode(RawValues v) {
        String text = v.text(HTTP_UNIX_SOCKET_MODE);
        SettingRelations.require(text.matches("0?[0-7]{3}"), "--http-unix-socket-mode must be octal permissions like 0600 or 0660, got '"
                + text + "'");
        int mode = Integer.parseInt(text, 8);
        SettingRelations.require((mode & 07) == 0, "--http-unix-socket-mode " + text + " grants others access to the socket:"
                + " the last digit must be 0 (use a group, 0660, for engines of another user)");
        String rwx = "rwxrwxrwx";
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 9; i++) {
            sb.append((mode & (1 << (8 - i))) != 0 ? rwx.charAt(i) : '-');
        }
        return java.nio.file.attribute.PosixFilePermissions.fromString(sb.toString());
    }

    /** All three peer TLS files or none (BND-6); the files are read and checked here. */
    static Optional<PeerTls> peerTls(RawValues v, NodeId nodeId) {
        List<Setting> files = List.of(PEER_TLS_CERT_FILE, PEER_TLS_KEY_FILE, PEER_TLS_CA_FILE);
        List<String> missing = files.stream().filter(s -> !v.given(s)).map(Setting::flag).toList();
        if (missing.size() == files.size()) {
            return Optional.empty();
        }
        SettingRelations.require(missing.isEmpty(), "--peer-tls-cert-file, --peer-tls-key-file and --peer-tls-ca-file go together: "
                + String.join(" and ", missing) + " missing");
        return Optional.of(PeerTls.load(path(v, PEER_TLS_CERT_FILE), path(v, PEER_TLS_KEY_FILE), path(v, PEER_TLS_CA_FILE),
                nodeId, PeerTls.sslProvider(tlsProvider(v))));
    }

    /** {@code --transfer-tls-provider} (issue 33): openssl must load here, or the start is refused naming the cause. */
    static TlsProvider tlsProvider(RawValues v) {
        String text = v.text(TRANSFER_TLS_PROVIDER);
        TlsProvider p = switch (text) {
            case "auto" -> TlsProvider.AUTO;
            case "jdk" -> TlsProvider.JDK;
            case "openssl" -> TlsProvider.OPENSSL;
            default -> null;
        };
        SettingRelations.require(p != null, "--transfer-tls-provider must be auto, jdk or openssl, got '" + text + "'");
        SettingRelations.require(p != TlsProvider.OPENSSL || io.netty.handler.ssl.OpenSsl.isAvailable(),
                "--transfer-tls-provider openssl: netty-tcnative does not load on this host ("
                        + io.netty.handler.ssl.OpenSsl.unavailabilityCause() + "); use auto or jdk");
        return p;
    }
}
