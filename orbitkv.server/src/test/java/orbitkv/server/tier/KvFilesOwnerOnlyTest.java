package orbitkv.server.tier;

import static orbitkv.server.tier.Payloads.key;
import static orbitkv.server.tier.Payloads.payload;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 33 finding "Cached KV bytes are world-readable: the DRAM arena in /dev/shm, the SSD block files and the
 * lock file are created 0644 under the usual umask; an unprivileged user read a saved payload from both."
 *
 * <p>The JVM cannot change its umask (the Manager runs under whatever the operator gives it, typically 022), so
 * the modes are checked as created under this JVM's umask: files 0600, created directories 0700. Where the
 * machine allows it (root with {@code setpriv}), a second user ({@code nobody}) then tries to read each file and
 * must fail. Directories are placed under a parent every user may traverse (0755), as an operator's would be.
 */
@Tag("unit")
class KvFilesOwnerOnlyTest {
    private static final String OWNER_ONLY_FILE = "rw-------";
    private static final String OWNER_ONLY_DIR = "rwx------";

    private final List<AutoCloseable> open = new ArrayList<>();
    private Path base;

    @AfterEach
    void cleanUp() throws Exception {
        for (AutoCloseable c : open.reversed()) {
            c.close();
        }
        if (base != null) {
            try (Stream<Path> all = Files.walk(base)) {
                for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** A parent directory every user may traverse and list (0755), like /var/lib or a mount point. */
    private Path traversableBase() throws IOException {
        base = Files.createTempDirectory(Path.of("/tmp"), "orbitkv-modes-");
        Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
        return base;
    }

    @Test
    @DisplayName("issue 33 cachedKvBytesAreWorldReadable: arena, SSD block files and lock file are 0600, created directories 0700; another user reads none")
    void cachedKvBytesAreWorldReadable_tierFilesAndDirectoriesAreOwnerOnly() throws Exception {
        Path root = traversableBase();
        Path dramDir = root.resolve("shm").resolve("dram"); // both levels created by the tier
        Path ssdDir = root.resolve("ssd");                   // created by the tier
        RecordingListener listener = new RecordingListener();
        SsdTier ssd = SsdTier.open(ssdDir, 1 << 20, 16, 16, 1 << 20, listener);
        DramTier dram = DramTier.open(dramDir, 1 << 20, 16, listener);
        LocalTiers tiers = new LocalTiers(dram, ssd, listener);
        open.add(tiers);
        byte[] secret = payload(7, 1, 4096);
        assertThat(tiers.save(key(1), secret)).isInstanceOf(SaveOutcome.Stored.class);
        assertThat(tiers.awaitSubmittedSaves(TimeUnit.SECONDS.toMillis(60))).isTrue();
        Path blockFile = ssd.fileOf(key(1)).orElseThrow();

        List<Path> files = List.of(dram.arenaFile(), ssdDir.resolve(SsdTier.LOCK_FILE), blockFile);
        for (Path f : files) {
            assertThat(mode(f)).as("mode of %s", f).isEqualTo(OWNER_ONLY_FILE);
        }
        for (Path d : List.of(root.resolve("shm"), dramDir, ssdDir)) {
            assertThat(mode(d)).as("mode of created directory %s", d).isEqualTo(OWNER_ONLY_DIR);
        }
        for (Path f : files) {
            assertSecondUserCannotRead(f);
        }
    }

    @Test
    @DisplayName("issue 33 cachedKvBytesAreWorldReadable: in an operator's 0755 directory the files themselves stop another user")
    void cachedKvBytesAreWorldReadable_filesInAnOperatorsDirectoryAreOwnerOnly() throws Exception {
        Path root = traversableBase();
        Path dramDir = Files.createDirectory(root.resolve("dram"));
        Path ssdDir = Files.createDirectory(root.resolve("ssd"));
        for (Path d : List.of(dramDir, ssdDir)) {
            Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxr-xr-x")); // allowed by the start rule
        }
        // An older version's lock file (0644) is tightened when the tier takes the directory again.
        Files.writeString(ssdDir.resolve(SsdTier.LOCK_FILE), "old holder", StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(ssdDir.resolve(SsdTier.LOCK_FILE), PosixFilePermissions.fromString("rw-r--r--"));
        RecordingListener listener = new RecordingListener();
        SsdTier ssd = SsdTier.open(ssdDir, 1 << 20, 16, 16, 1 << 20, listener);
        DramTier dram = DramTier.open(dramDir, 1 << 20, 16, listener);
        LocalTiers tiers = new LocalTiers(dram, ssd, listener);
        open.add(tiers);
        assertThat(tiers.save(key(2), payload(7, 2, 8192))).isInstanceOf(SaveOutcome.Stored.class);
        assertThat(tiers.awaitSubmittedSaves(TimeUnit.SECONDS.toMillis(60))).isTrue();
        Path blockFile = ssd.fileOf(key(2)).orElseThrow();
        for (Path f : List.of(dram.arenaFile(), ssdDir.resolve(SsdTier.LOCK_FILE), blockFile)) {
            assertThat(mode(f)).as("mode of %s", f).isEqualTo(OWNER_ONLY_FILE);
            assertSecondUserCannotRead(f);
        }
    }

    @Test
    @DisplayName("issue 33 cachedKvBytesAreWorldReadable: the restore arena's tmpfs file is created 0600 (then unlinked)")
    void cachedKvBytesAreWorldReadable_restoreArenaFileIsOwnerOnly() throws Exception {
        Path root = traversableBase();
        Path dir = root.resolve("restore");
        RestoreArena arena = RestoreArena.map(dir, 1 << 20);
        open.add(arena);
        assertThat(mode(dir)).isEqualTo(OWNER_ONLY_DIR);
        // The file is unlinked once mapped; its mapping is still listed in /proc/self/maps, and (as root)
        // /proc/self/map_files/<range> stats the mapped inode itself.
        Path mapped = mappedFile("orbitkv-restore-");
        if (mapped != null) {
            assertThat(mode(mapped)).isEqualTo(OWNER_ONLY_FILE);
        }
        try (Stream<Path> left = Files.list(dir)) {
            assertThat(left.toList()).as("the restore arena leaves no name behind").isEmpty();
        }
    }

    private static String mode(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    /** The /proc/self/map_files entry of the newest mapping whose (deleted) file name starts with {@code prefix}. */
    private static Path mappedFile(String prefix) throws IOException {
        Path found = null;
        for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
            if (line.contains("/" + prefix)) {
                found = Path.of("/proc/self/map_files", line.substring(0, line.indexOf(' ')));
            }
        }
        if (found == null || !Files.isReadable(found)) {
            return null;
        }
        return found;
    }

    /**
     * When this JVM runs as root and {@code setpriv} exists, {@code nobody} tries to read {@code f}: it must fail.
     * Elsewhere the mode checks above stand alone.
     */
    static void assertSecondUserCannotRead(Path f) throws Exception {
        if (!"root".equals(System.getProperty("user.name")) || !Files.isExecutable(Path.of("/usr/bin/setpriv"))) {
            return;
        }
        Process p = new ProcessBuilder("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                "/bin/cat", f.toString()).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readNBytes(256);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("uid 65534 reading %s: %s", f, new String(out, StandardCharsets.UTF_8)).isNotZero();
        assertThat(new String(out, StandardCharsets.UTF_8)).contains("Permission denied");
    }
}
