package orbitkv.server.cli;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The private directory Netty unpacks its native libraries into (epoll, io_uring, netty-tcnative's BoringSSL) before
 * loading them, {@code io.netty.native.workdir}. Unless the operator set it, each start makes a fresh directory only
 * its user can enter ({@code orbitkv-native-<pid>-<random>}, 0700 from {@link Files#createTempDirectory}), so no
 * other local user can plant or swap a library between its extraction and its load (issue 33; docs/security.md
 * "Files"). Netty deletes each library right after loading it; the empty directory is removed at a normal exit.
 * A killed process cannot remove its own, so each start also removes the empty directories of this user whose
 * process no longer runs: a Manager restarted after every kill -9 leaves none behind.
 */
final class NativeWorkdir {
    static final String PREFIX = "orbitkv-native-";
    private static final Pattern NAME = Pattern.compile(Pattern.quote(PREFIX) + "(\\d{1,10})-\\d+");

    private NativeWorkdir() {}

    /** Sets {@code io.netty.native.workdir} to a fresh private directory under the temporary directory. */
    static void install() {
        if (System.getProperty("io.netty.native.workdir") != null) {
            return;
        }
        try {
            Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
            Path dir = Files.createTempDirectory(tmp, PREFIX + ProcessHandle.current().pid() + "-");
            dir.toFile().deleteOnExit();
            System.setProperty("io.netty.native.workdir", dir.toString());
            sweepQuietly(tmp, Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS));
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            System.err.println("orbitkv: cannot create a private directory for Netty's native libraries (" + e.getMessage()
                    + "); they are unpacked into the temporary directory");
        }
    }

    private static void sweepQuietly(Path tmp, UserPrincipal me) {
        try {
            int removed = sweep(tmp, me);
            if (removed > 0) {
                System.err.println("orbitkv: removed " + removed + " empty native-library directories of exited"
                        + " processes under " + tmp);
            }
        } catch (IOException e) {
            System.err.println("orbitkv: could not look for native-library directories of exited processes under "
                    + tmp + " (" + e.getMessage() + ")");
        }
    }

    /**
     * Removes the directories {@code orbitkv-native-<pid>-<n>} under {@code tmp} that are empty, owned by {@code me}
     * (this user) and whose process is gone; a live process's directory, a non-empty one, another user's or a link is left
     * alone (a reused pid only keeps a leftover). Returns how many it removed.
     */
    static int sweep(Path tmp, UserPrincipal me) throws IOException {
        int removed = 0;
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(tmp, PREFIX + "*")) {
            for (Path d : dirs) {
                try {
                    if (leftBehind(d, me)) {
                        Files.delete(d); // refuses a directory that is not empty
                        removed++;
                    }
                } catch (IOException e) {
                    // not empty, or gone meanwhile: left alone
                }
            }
        }
        return removed;
    }

    private static boolean leftBehind(Path d, UserPrincipal me) throws IOException {
        Matcher m = NAME.matcher(d.getFileName().toString());
        return m.matches() && Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)
                && me.equals(Files.getOwner(d, LinkOption.NOFOLLOW_LINKS))
                && ProcessHandle.of(Long.parseLong(m.group(1))).isEmpty();
    }
}
