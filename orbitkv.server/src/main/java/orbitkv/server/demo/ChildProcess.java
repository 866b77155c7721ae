package orbitkv.server.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A child process the demo started (etcd or a Manager): stdout lines are appended to a log file and watched
 * for a readiness line; stderr goes to its own file. {@link #close()} kills it if it still runs, so the demo
 * never leaves a process behind.
 */
final class ChildProcess implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path stderr;
    private final CompletableFuture<String> ready = new CompletableFuture<>();

    private ChildProcess(String name, Process process, Path stderr) {
        this.name = name;
        this.process = process;
        this.stderr = stderr;
    }

    static ChildProcess start(String name, List<String> command, Path logDir, Predicate<String> readyLine) throws IOException {
        Files.createDirectories(logDir);
        Path out = logDir.resolve(name + ".out");
        Path err = logDir.resolve(name + ".err");
        Process p = new ProcessBuilder(command).redirectError(err.toFile()).start();
        ChildProcess c = new ChildProcess(name, p, err);
        Thread.ofPlatform().daemon(true).name("demo-out-" + name).start(() -> c.pump(out, readyLine));
        return c;
    }

    /**
     * The command that runs this program's own launcher with {@code args}: the same {@code java} (inside the
     * runtime image, the image's own), and, when this JVM runs from a module path (a development build), the
     * same module path.
     */
    static List<String> selfCommand(List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElseThrow(
                () -> new IllegalStateException("cannot find this process's java launcher")));
        String modulePath = System.getProperty("jdk.module.path");
        if (modulePath != null && !modulePath.isBlank()) {
            cmd.addAll(List.of("-XX:TieredStopAtLevel=1", "-Xmx256m", "--sun-misc-unsafe-memory-access=allow",
                    "--enable-native-access=io.netty.common,ALL-UNNAMED", "-p", modulePath,
                    "--add-modules", "ALL-MODULE-PATH"));
        } else {
            cmd.addAll(List.of("-XX:TieredStopAtLevel=1", "-Xmx256m"));
        }
        cmd.addAll(List.of("-m", "orbitkv.server/orbitkv.server.cli.OrbitKvCommand"));
        cmd.addAll(args);
        return cmd;
    }

    private void pump(Path out, Predicate<String> readyLine) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                Files.writeString(out, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                if (readyLine.test(line)) {
                    ready.complete(line);
                }
            }
        } catch (IOException e) {
            ready.completeExceptionally(e);
        } finally {
            ready.completeExceptionally(new IllegalStateException(name + " ended its output without a ready line"));
        }
    }

    /** The ready line within {@code bound}, else an exception naming the process and its stderr tail. */
    String awaitReady(Duration bound) {
        try {
            return ready.get(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(name + " was not ready within " + bound.toSeconds() + " s: " + e.getMessage()
                    + "; stderr: " + stderrTail(), e);
        }
    }

    String stderrTail() {
        try {
            String s = Files.exists(stderr) ? Files.readString(stderr) : "";
            return s.length() > 2000 ? s.substring(s.length() - 2000) : s;
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    String name() {
        return name;
    }

    /** SIGKILL and wait. */
    void kill9() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** SIGTERM and wait for the exit code within {@code bound}; -1 if it did not exit. */
    int terminate(Duration bound) throws InterruptedException {
        process.destroy();
        return process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS) ? process.exitValue() : -1;
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
