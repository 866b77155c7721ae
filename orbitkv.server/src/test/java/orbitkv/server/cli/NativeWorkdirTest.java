package orbitkv.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The start-up sweep of native-library directories left by killed processes (docs/security.md "Files"). */
@Tag("unit")
class NativeWorkdirTest {
    @TempDir
    Path tmp;

    /** The pid of a process that has exited (and was reaped), so no process of it runs. */
    private static long exitedPid() throws Exception {
        Process p = new ProcessBuilder("true").start();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return p.pid();
    }

    @Test
    @DisplayName("a killed process's empty directory is removed; a live process's, a non-empty one and other names stay")
    void sweepRemovesOnlyEmptyDirectoriesOfExitedProcesses() throws Exception {
        long dead = exitedPid();
        long live = ProcessHandle.current().pid();
        Path deadEmpty = Files.createDirectory(tmp.resolve(NativeWorkdir.PREFIX + dead + "-17"));
        Path deadFull = Files.createDirectory(tmp.resolve(NativeWorkdir.PREFIX + dead + "-18"));
        Files.writeString(deadFull.resolve("libnetty.so"), "x");
        Path liveEmpty = Files.createDirectory(tmp.resolve(NativeWorkdir.PREFIX + live + "-19"));
        Path oldFormat = Files.createDirectory(tmp.resolve(NativeWorkdir.PREFIX + "123456789012345"));
        Path file = Files.writeString(tmp.resolve(NativeWorkdir.PREFIX + dead + "-20"), "not a directory");
        Path link = Files.createSymbolicLink(tmp.resolve(NativeWorkdir.PREFIX + dead + "-21"), liveEmpty);

        int removed = NativeWorkdir.sweep(tmp, Files.getOwner(tmp, LinkOption.NOFOLLOW_LINKS));

        assertThat(removed).isEqualTo(1);
        assertThat(deadEmpty).doesNotExist();
        assertThat(deadFull).as("not empty: left alone").isDirectory();
        assertThat(liveEmpty).as("its process runs").isDirectory();
        assertThat(oldFormat).as("no pid in the name: liveness unknown").isDirectory();
        assertThat(file).isRegularFile();
        assertThat(Files.isSymbolicLink(link)).isTrue();
    }
}
