package orbitkv.server.tier;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;

/**
 * The files of an SSD tier directory ({@link SsdTier}): its lock file, taken before anything is touched (one Manager
 * per directory, issue 20 item 1), the block files {@code blk-<node>-<instance>-<n>.okv}, created owner-only (issue 33
 * item 3), and the start-up sweep of block files an earlier process left (OPS-4: no durable restart).
 */
final class SsdFiles {
    static final String FILE_PREFIX = "blk-";
    static final String FILE_SUFFIX = ".okv";

    private SsdFiles() {}

    /**
     * Locks {@code dir} for {@code instance} and deletes the block files left in it.
     *
     * @throws LocalResourceRefused if another live Manager (or another tier of this process) holds {@code dir}
     */
    static OwnerLock lockAndEmpty(Path dir, TierInstance instance) throws IOException {
        OwnerOnlyFiles.createDirectories(dir);
        Path lockFile = dir.resolve(SsdTier.LOCK_FILE);
        OwnerLock lock = switch (OwnerLock.acquireLockFile(lockFile, instance.holderText("not registered yet"))) {
            case OwnerLock.Attempt.Acquired a -> a.lock();
            case OwnerLock.Attempt.Held h -> throw new LocalResourceRefused("SSD directory " + dir.toAbsolutePath()
                    + " is in use by another Manager (" + h.holder().replace('\n', ' ').strip() + "; lock file "
                    + lockFile.toAbsolutePath() + "): give each Manager its own --ssd-dir");
        };
        try {
            deleteBlockFiles(dir);
            return lock;
        } catch (IOException | RuntimeException e) {
            lock.close();
            throw e;
        }
    }

    /** The path of block file number {@code fileId} of {@code instance} in {@code dir}. */
    static Path blockFile(Path dir, TierInstance instance, long fileId) {
        return dir.resolve(FILE_PREFIX + instance.fileTag() + "-" + fileId + FILE_SUFFIX);
    }

    /** Writes {@code payload} into a new owner-only file at {@code path} (never over an existing one). */
    static void write(Path path, MemorySegment payload) throws IOException {
        try (FileChannel ch = FileChannel.open(path, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                OwnerOnlyFiles.fileMode())) { // 0600 at creation (issue 33 item 3)
            ByteBuffer src = payload.asByteBuffer();
            while (src.hasRemaining()) {
                ch.write(src);
            }
        }
    }

    static void deleteBlockFiles(Path dir) throws IOException {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, FILE_PREFIX + "*" + FILE_SUFFIX)) {
            for (Path p : files) {
                Files.deleteIfExists(p);
            }
        }
    }
}
