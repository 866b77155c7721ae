package orbitkv.server.tier;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import java.util.function.ToLongFunction;

/**
 * The start-time space check of the tier directories (issue 33 item 5: "a --dram-dir tmpfs smaller than --dram is
 * accepted and saves then get TCP resets with no log line").
 *
 * <p>The DRAM arena and the restore arena are files of {@code --dram-dir} (a tmpfs) mapped into memory; tmpfs
 * allocates a page on its first write, so a tmpfs that is too small is only found out by a write, and a write to a
 * mapped page the filesystem cannot back is a SIGBUS (in the JVM an {@link InternalError} in the copying thread).
 * So the Manager refuses to start when the usable space of {@code --dram-dir}'s filesystem, after stale arenas of
 * dead Managers are reclaimed, is less than {@code --dram} plus {@code --restore-bytes-in-flight-max}: both sizes
 * are named. Space taken later by others (the tmpfs is shared) is caught per write: {@link DramTier} turns the
 * fault into {@link TierRefusal#BACKING_STORE_FULL} (a named refusal, logged, health degraded; {@link TierFaults}).
 *
 * <p>The SSD tier writes files with ordinary writes (a full disk is an I/O error, not a signal), so an SSD
 * filesystem with less usable space than {@code --ssd} is only warned about at start.
 */
public final class TierSpace {
    private TierSpace() {}

    /** The usable bytes of the filesystem holding {@code dir} (or its nearest existing parent). */
    public static long usableBytes(Path dir) {
        Path p = dir.toAbsolutePath().normalize();
        while (p != null && !Files.exists(p)) {
            p = p.getParent();
        }
        try {
            return p == null ? Long.MAX_VALUE : Files.getFileStore(p).getUsableSpace();
        } catch (IOException e) {
            return Long.MAX_VALUE; // unknown: the per-write check still holds
        }
    }

    /**
     * Why the DRAM directory cannot hold both arenas, or empty. Reclaims stale arena files first (they would
     * otherwise count as used), exactly as {@link DramTier#open} would.
     *
     * @param usable the usable bytes of a directory's filesystem ({@link #usableBytes} in production)
     */
    public static Optional<String> dramRefusal(Path dramDir, long dramBytes, long restoreBytes, ToLongFunction<Path> usable)
            throws IOException {
        if (Files.isDirectory(dramDir)) {
            DramTier.reclaimStaleArenas(dramDir);
        }
        long free = usable.applyAsLong(dramDir);
        long need = dramBytes + restoreBytes;
        if (free >= need) {
            return Optional.empty();
        }
        return Optional.of("--dram-dir " + dramDir.toAbsolutePath() + " has " + mib(free) + " usable, but --dram ("
                + mib(dramBytes) + ") plus --restore-bytes-in-flight-max (" + mib(restoreBytes) + ") need " + mib(need)
                + ": a write into a mapped page the filesystem cannot back would fail; lower --dram or give the tmpfs"
                + " more room (mount -o remount,size=...), docs/operations.md, sizing");
    }

    /** A warning when the SSD directory's filesystem has less usable space than {@code --ssd}, or empty. */
    public static Optional<String> ssdShortfall(Path ssdDir, long ssdBytes, ToLongFunction<Path> usable) {
        long free = usable.applyAsLong(ssdDir);
        if (free >= ssdBytes) {
            return Optional.empty();
        }
        return Optional.of("--ssd-dir " + ssdDir.toAbsolutePath() + " has " + mib(free) + " usable, less than --ssd ("
                + mib(ssdBytes) + "): SSD writes will fail once it is full (each a counted IO_ERROR, logged, /health"
                + " degraded)");
    }

    static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024.0));
    }
}
