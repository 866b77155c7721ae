package orbitkv.server.tier;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An exclusive lock on a file held for the life of a tier (issue 20 item 1): {@link FileChannel#tryLock()}
 * (a POSIX record lock, released by the kernel when the holding process dies, so a kill -9 leaves no stale
 * lock behind, only a file whose lock is free).
 *
 * <p>POSIX locks belong to the process, and closing <em>any</em> descriptor of a file drops the process's
 * locks on it; so this JVM never opens a second channel on a file it holds: {@link #HELD} lists them and
 * every probe checks it first. Two tiers of one JVM on one directory are therefore refused like two
 * processes are.
 */
final class OwnerLock implements AutoCloseable {
    /** Files locked by this JVM (absolute, normalized) and the holder text each one carries. */
    private static final Map<Path, String> HELD = new ConcurrentHashMap<>();

    private final Path file;
    private final FileChannel channel;
    private final FileLock lock;

    private OwnerLock(Path file, FileChannel channel, FileLock lock) {
        this.file = file;
        this.channel = channel;
        this.lock = lock;
    }

    /** The outcome of {@link #acquireLockFile}. */
    sealed interface Attempt {
        record Acquired(OwnerLock lock) implements Attempt {}

        /** Another live owner holds it; {@code holder} is what it wrote into the lock file. */
        record Held(String holder) implements Attempt {}
    }

    /**
     * Locks {@code file} (created if absent; never deleted, so two starters always race on one inode) and
     * writes {@code holderText} into it. If another owner holds it, returns what that owner wrote.
     */
    static Attempt acquireLockFile(Path file, String holderText) throws IOException {
        Path key = key(file);
        String mine = HELD.putIfAbsent(key, holderText);
        if (mine != null) {
            return new Attempt.Held(mine.strip() + " (this process)");
        }
        FileChannel ch = null;
        try {
            ch = FileChannel.open(key, java.util.Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE), OwnerOnlyFiles.fileMode()); // 0600 when created (issue 33 item 3)
            OwnerOnlyFiles.restrictExisting(key); // one left by an older version may be 0644
            FileLock l = ch.tryLock();
            if (l == null) {
                String holder = readAll(ch);
                ch.close();
                HELD.remove(key);
                return new Attempt.Held(holder.isBlank() ? "a process that has not recorded itself yet" : holder.strip());
            }
            OwnerLock owner = new OwnerLock(key, ch, l);
            owner.rewrite(holderText);
            return new Attempt.Acquired(owner);
        } catch (IOException | RuntimeException e) {
            if (ch != null) {
                ch.close();
            }
            HELD.remove(key);
            throw e;
        }
    }

    /**
     * Locks a file this process has just created and holds {@code channel} on (it must not be visible under
     * a name other processes probe until it is locked: create under a temporary name, lock, then rename).
     */
    static OwnerLock adopt(Path file, FileChannel channel) throws IOException {
        FileLock l = channel.tryLock();
        if (l == null) {
            throw new IOException("cannot lock " + file + ", which this process has just created");
        }
        Path key = key(file);
        HELD.put(key, "");
        return new OwnerLock(key, channel, l);
    }

    /** After a rename of an adopted file: the lock (on the inode) now guards {@code renamed}. */
    OwnerLock renamed(Path renamed) {
        Path key = key(renamed);
        HELD.remove(file);
        HELD.put(key, "");
        return new OwnerLock(key, channel, lock);
    }

    /**
     * Deletes {@code file} iff its owner is gone (its lock is free). Returns true if it was deleted. A file
     * held by this JVM or by another live process is left alone.
     */
    static boolean deleteIfOwnerGone(Path file) throws IOException {
        Path key = key(file);
        if (HELD.containsKey(key)) {
            return false;
        }
        try (FileChannel ch = FileChannel.open(key, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            FileLock l = ch.tryLock();
            if (l == null) {
                return false;
            }
            Files.deleteIfExists(key);
            return true; // closing the channel releases the probe's lock
        } catch (NoSuchFileException gone) {
            return false; // another starter reclaimed it first
        }
    }

    /** Replaces the lock file's text (holder details, e.g. once the incarnation is known). */
    void rewrite(String holderText) throws IOException {
        byte[] b = holderText.getBytes(StandardCharsets.UTF_8);
        channel.truncate(0);
        ByteBuffer buf = ByteBuffer.wrap(b);
        long pos = 0;
        while (buf.hasRemaining()) {
            pos += channel.write(buf, pos);
        }
        channel.force(false);
        HELD.replace(file, holderText);
    }

    Path file() {
        return file;
    }

    FileChannel channel() {
        return channel;
    }

    @Override
    public void close() throws IOException {
        try {
            if (lock.isValid()) {
                lock.release();
            }
        } finally {
            channel.close();
            HELD.remove(file);
        }
    }

    private static String readAll(FileChannel ch) throws IOException {
        long size = Math.min(ch.size(), 4096);
        ByteBuffer b = ByteBuffer.allocate((int) size);
        long pos = 0;
        while (b.hasRemaining()) {
            int n = ch.read(b, pos);
            if (n < 0) {
                break;
            }
            pos += n;
        }
        return new String(b.array(), 0, b.position(), StandardCharsets.UTF_8);
    }

    private static Path key(Path file) {
        return file.toAbsolutePath().normalize();
    }
}
