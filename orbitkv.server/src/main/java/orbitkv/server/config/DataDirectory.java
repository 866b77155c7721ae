package orbitkv.server.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.Optional;

/**
 * The rule for a directory the tiers keep KV bytes in ({@code --dram-dir}, {@code --ssd-dir}; issue 33 item 3).
 * Another user who may write into the directory can delete or rename the Manager's files and put their own in
 * their place, so the Manager refuses to start on:
 * <ul>
 *   <li>a directory writable by its group or by others <em>unless</em> the sticky bit is set (in a sticky
 *       directory such as {@code /dev/shm} or {@code /tmp}, mode 1777, only a file's owner may delete or rename
 *       it, so the default {@code --dram-dir /dev/shm} is accepted);</li>
 *   <li>a directory owned by a user other than the Manager's own user and root;</li>
 *   <li>a path that exists and is not a directory.</li>
 * </ul>
 * A path that does not exist yet is judged by its nearest existing ancestor (the tiers create the missing part
 * with mode 0700). Symbolic links are followed: the rule is about the directory the files land in. Read-only
 * checks; nothing is created here.
 */
public final class DataDirectory {
    private DataDirectory() {}

    /** Throws a {@link ConfigException} naming {@code option}, the directory and its mode if the rule refuses it. */
    static void require(Setting option, Path dir) {
        refusal(dir, currentUser()).ifPresent(why -> {
            throw new ConfigException(option.flag() + " " + why);
        });
    }

    /** Why {@code dir} is refused for a Manager running as {@code self} (null: unknown, ownership not checked). */
    public static Optional<String> refusal(Path dir, UserPrincipal self) {
        Path abs = dir.toAbsolutePath().normalize();
        Path existing = abs;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return Optional.empty(); // nothing to judge (a relative root that does not exist cannot happen)
        }
        String which = existing.equals(abs) ? "directory " + abs : "directory " + existing + " (the existing parent of " + abs + ")";
        if (!Files.isDirectory(existing)) {
            return Optional.of(abs + " is not a directory: " + existing + " is a file");
        }
        PosixFileAttributes a;
        try {
            a = Files.readAttributes(existing, PosixFileAttributes.class);
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.of("cannot read the mode of " + which + ": " + e);
        }
        int mode = mode(existing, a);
        String modeText = String.format("%04o", mode & 07777) + " (" + PosixFilePermissions.toString(a.permissions()) + ")";
        boolean sticky = (mode & 01000) != 0;
        boolean othersWrite = a.permissions().contains(PosixFilePermission.GROUP_WRITE)
                || a.permissions().contains(PosixFilePermission.OTHERS_WRITE);
        if (othersWrite && !sticky) {
            return Optional.of(which + " has mode " + modeText + ": it is writable by other users and not sticky,"
                    + " so they could replace the Manager's files; use a directory only its owner can write"
                    + " (chmod go-w), or a sticky one like /dev/shm (docs/operations.md, file modes)");
        }
        if (self != null && !a.owner().equals(self) && !"root".equals(a.owner().getName())) {
            return Optional.of(which + " (mode " + modeText + ") is owned by " + a.owner().getName()
                    + ", not by the Manager's user " + self.getName() + " or root; give the Manager a directory of its own"
                    + " (docs/operations.md, file modes)");
        }
        return Optional.empty();
    }

    /** The Manager's user, or null if it cannot be looked up (then ownership is not checked). */
    static UserPrincipal currentUser() {
        try {
            return java.nio.file.FileSystems.getDefault().getUserPrincipalLookupService()
                    .lookupPrincipalByName(System.getProperty("user.name"));
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    private static int mode(Path p, PosixFileAttributes a) {
        try {
            Object m = Files.getAttribute(p, "unix:mode", new LinkOption[0]);
            if (m instanceof Integer i) {
                return i;
            }
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            // fall through: the permission bits only, no sticky bit known
        }
        int bits = 0;
        for (PosixFilePermission perm : a.permissions()) {
            bits |= 1 << (8 - perm.ordinal());
        }
        return bits;
    }
}
