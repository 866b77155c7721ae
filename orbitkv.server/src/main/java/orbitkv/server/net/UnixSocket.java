package orbitkv.server.net;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Objects;
import java.util.Set;

/**
 * The HTTP API's Unix-domain socket ({@code --http-unix-socket PATH}, {@code --http-unix-socket-mode}; issue 33)
 * for engines on the same host: the same handler, limits and tokens as the TCP listener, on Netty's native
 * domain socket channel (io_uring or epoll). All its connections are one client of the per-client rules.
 *
 * <p>The socket file never exists with looser permissions than asked: it is bound inside a fresh private
 * directory (0700) beside {@code path}, given its mode, then renamed into place. A stale socket file left by a
 * crashed Manager is replaced; one that still accepts connections, or any other kind of file, refuses the start.
 * The file is deleted on close.
 *
 * @param path where the socket file appears
 * @param mode its permissions
 */
public record UnixSocket(Path path, Set<PosixFilePermission> mode) {
    public UnixSocket {
        Objects.requireNonNull(path, "path");
        mode = Set.copyOf(mode);
    }

    /** Binds {@code bootstrap} at {@link #path}, safely (see the class comment). */
    public Channel bind(ServerBootstrap bootstrap) throws InterruptedException {
        try {
            replaceStale();
            Path dir = Files.createTempDirectory(path.toAbsolutePath().getParent(), ".okv",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Path staged = dir.resolve("s");
            try {
                Channel ch = bootstrap.bind(new DomainSocketAddress(staged.toString())).sync().channel();
                try {
                    Files.setPosixFilePermissions(staged, mode);
                    Files.move(staged, path, StandardCopyOption.ATOMIC_MOVE);
                } catch (IOException | RuntimeException e) {
                    ch.close().syncUninterruptibly();
                    throw e;
                }
                return ch;
            } finally {
                Files.deleteIfExists(staged);
                Files.deleteIfExists(dir);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("--http-unix-socket " + path + " cannot be bound: " + e.getMessage(), e);
        }
    }

    private void replaceStale() throws IOException {
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (!a.isOther()) {
            throw new IllegalStateException("--http-unix-socket " + path + " exists and is not a socket: refusing to replace it");
        }
        try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            probe.connect(UnixDomainSocketAddress.of(path));
            throw new IllegalStateException("--http-unix-socket " + path + " is in use by another process");
        } catch (IOException stale) {
            Files.deleteIfExists(path); // nobody accepts there: a socket left by a crashed process
        }
    }

    /** Removes the socket file (after its listener closed). */
    public void delete() {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            // best effort: a stale socket file is replaced at the next start
        }
    }
}
