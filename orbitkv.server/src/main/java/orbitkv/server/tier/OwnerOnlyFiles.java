package orbitkv.server.tier;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Set;

/**
 * The modes of everything the tiers create (issue 33 item 3: KV bytes reveal the prompts they were computed
 * from): files {@code 0600}, directories {@code 0700}, whatever the umask. The mode is an attribute of the
 * {@code open(O_CREAT)} / {@code mkdir} call itself, never a chmod afterwards (which would leave a window in
 * which another user can open the file). A umask can only remove bits, so the result is at most the mode given;
 * the owner keeps its bits unless the umask removes them (then the tier fails loudly on its own files).
 *
 * <p>Covered: the DRAM arena ({@link DramTier}, also its {@code .creating} name), the SSD block files and the
 * SSD lock file ({@link SsdTier}, {@link OwnerLock}), the restore arena's temporary file ({@link RestoreArena}),
 * and every directory of a tier path that does not exist yet.
 */
public final class OwnerOnlyFiles {
    /** {@code rw-------}. */
    public static final Set<PosixFilePermission> FILE_MODE = PosixFilePermissions.fromString("rw-------");
    /** {@code rwx------}. */
    public static final Set<PosixFilePermission> DIRECTORY_MODE = PosixFilePermissions.fromString("rwx------");

    private OwnerOnlyFiles() {}

    /** The creation attribute of a tier file: {@code 0600}. */
    static FileAttribute<Set<PosixFilePermission>> fileMode() {
        return PosixFilePermissions.asFileAttribute(FILE_MODE);
    }

    /**
     * Creates every missing directory of {@code dir} with mode {@code 0700} (existing ones are left as they are:
     * they belong to the operator, and the start checked them, see {@code DataDirectory}).
     */
    static void createDirectories(Path dir) throws IOException {
        Path abs = dir.toAbsolutePath().normalize();
        Deque<Path> missing = new ArrayDeque<>();
        for (Path p = abs; p != null && !Files.isDirectory(p); p = p.getParent()) {
            missing.push(p);
        }
        FileAttribute<Set<PosixFilePermission>> mode = PosixFilePermissions.asFileAttribute(DIRECTORY_MODE);
        while (!missing.isEmpty()) {
            Path p = missing.pop();
            try {
                Files.createDirectory(p, mode);
            } catch (FileAlreadyExistsException raced) {
                if (!Files.isDirectory(p)) {
                    throw raced;
                }
            }
        }
    }

    /**
     * Tightens a file this tier reuses (the SSD lock file is never deleted, so one written by an older version
     * may carry 0644) to {@code 0600}; a file it creates is created with that mode instead.
     */
    static void restrictExisting(Path file) throws IOException {
        if (!Files.getPosixFilePermissions(file).equals(FILE_MODE)) {
            Files.setPosixFilePermissions(file, FILE_MODE);
        }
    }
}
