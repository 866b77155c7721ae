package orbitkv.conformance.manager;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One real Manager as a separate OS process (DESIGN §10: real Managers on loopback). It runs with the same
 * {@code java} and the same jars as the test JVM ({@code jdk.module.path} and {@code java.class.path}, all
 * put on the child's module path, test-only jars left out), main class
 * {@code orbitkv.server/orbitkv.server.cli.OrbitKvCommand}. Standard output is read line by line into a
 * log file and scanned for the ready line, which must appear within a bound; standard error goes to its
 * own file. {@link #close()} always kills the process (SIGKILL) if it still runs.
 */
public final class ManagerProcess implements AutoCloseable {
    static final Duration READY_BOUND = Duration.ofSeconds(45);
    /**
     * The lease of gate Managers whose test is not about lease timing: a Manager fences itself 6 s (TTL - margin)
     * after a renewal send etcd has not confirmed, with a 2 s etcd call deadline. The former 4 s - 1 s with a 1 s
     * deadline fenced Managers during startup at load ~15 (issue 25). Gates about fencing set their own.
     */
    public static final List<String> LOAD_TOLERANT_LEASE = List.of("--lease-ttl-ms", "8000", "--fence-safety-margin-ms", "2000",
            "--renewal-interval-ms", "500", "--etcd-call-timeout-ms", "2000");
    private static final Pattern READY = Pattern.compile(
            "^orbitkv manager ready http=(\\S+) peer=(\\S+) incarnation=(\\S+) .*$");
    /** Jars of the test stack: never on the Manager's module path. */
    private static final Pattern TEST_ONLY = Pattern.compile(
            "junit|assertj|opentest4j|apiguardian|surefire|byte-buddy|jmh|test-classes|jopt-simple|commons-math3");

    private final String name;
    private final Process process;
    private final Path stdout;
    private final Path stderr;
    private final CompletableFuture<String> ready = new CompletableFuture<>();
    /** The command line this process was launched with. */
    private List<String> command = List.of();

    private ManagerProcess(String name, Process process, Path stdout, Path stderr) {
        this.name = name;
        this.process = process;
        this.stdout = stdout;
        this.stderr = stderr;
    }

    /**
     * JVM heap of a Manager process: room for the default bounds (a Manager refuses bounds beyond its heap and
     * direct-memory limits; the direct limit defaults to the heap's).
     */
    static final String HEAP = "-Xmx640m";

    /**
     * A loopback port free at the moment of asking, for an option that must be known before the process starts
     * (an advertised data port behind a fault proxy); the process binds it soon after, a race the gates accept.
     */
    public static int freeLoopbackPort() throws IOException {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** Launches {@code orbitkv <args...>} and does not wait. */
    public static ManagerProcess launch(String name, Path logDir, List<String> args) throws IOException {
        return launch(name, logDir, List.of(HEAP), args);
    }

    /** Launches {@code orbitkv <args...>} with {@code jvmOptions} (heap and direct-memory limits) and does not wait. */
    public static ManagerProcess launch(String name, Path logDir, List<String> jvmOptions, List<String> args) throws IOException {
        return launch(name, logDir, List.of(), jvmOptions, args);
    }

    /**
     * Launches {@code prefix... java jvmOptions... orbitkv <args...>} and does not wait; {@code prefix} runs the
     * JVM elsewhere (e.g. {@code ip netns exec NS}, which execs it: the process id stays the JVM's).
     */
    public static ManagerProcess launch(String name, Path logDir, List<String> prefix, List<String> jvmOptions,
                                        List<String> args) throws IOException {
        return launchModule(name, logDir, prefix, jvmOptions, TEST_STARTUP, "orbitkv.server/orbitkv.server.cli.OrbitKvCommand", args);
    }

    /**
     * Every launched process exits on OutOfMemoryError as the image's launcher does (dist/pom.xml; issue 33): a
     * Manager out of memory must end, not linger with its lease lapsed.
     */
    public static final String EXIT_ON_OUT_OF_MEMORY = "-XX:+ExitOnOutOfMemoryError";

    /**
     * Start-up flags of test processes (serial GC, C1 only): fast start, not the image's steady state; {@code -ea}: a
     * Manager under test checks its hot-path invariants (issue 34 item 8: byte budgets, pins, credits never below 0).
     */
    static final List<String> TEST_STARTUP = List.of("-ea", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto");

    /**
     * The runtime image's JVM settings (dist/pom.xml: default GC and the full JIT, {@code -Xmx1g
     * -XX:MaxDirectMemorySize=1g}; {@link #EXIT_ON_OUT_OF_MEMORY} is added to every launch), without the test start-up flags (serial GC, C1 only) that {@link #launch} adds:
     * for the performance harnesses, whose figures must describe the Manager as operators run it.
     */
    public static final List<String> IMAGE_JVM = List.of("-Xmx1g", "-XX:MaxDirectMemorySize=1g");

    /** Launches {@code orbitkv <args...>} with the image's JVM settings ({@link #IMAGE_JVM}) and does not wait. */
    public static ManagerProcess launchAsImage(String name, Path logDir, List<String> args) throws IOException {
        return launchAsImage(name, logDir, List.of(), args);
    }

    /**
     * As {@link #launchAsImage(String, Path, List)} with {@code extraJvm} after the image's settings (a harness's
     * profiling flags, e.g. {@code -XX:StartFlightRecording=...}).
     */
    public static ManagerProcess launchAsImage(String name, Path logDir, List<String> extraJvm, List<String> args)
            throws IOException {
        List<String> jvm = new ArrayList<>(IMAGE_JVM);
        jvm.addAll(extraJvm);
        return launchModule(name, logDir, List.of(), jvm, List.of(), "orbitkv.server/orbitkv.server.cli.OrbitKvCommand", args);
    }

    /**
     * Launches another main class of the same module path ({@code module/class}, e.g. the conformance kit's
     * {@code orbitkv.conformance/orbitkv.conformance.kit.ConformanceCommand}) with a 256 MiB heap and does not wait.
     */
    public static ManagerProcess launchModule(String name, Path logDir, String moduleMain, List<String> args) throws IOException {
        return launchModule(name, logDir, List.of(), List.of("-Xmx256m"), TEST_STARTUP, moduleMain, args);
    }

    private static ManagerProcess launchModule(String name, Path logDir, List<String> prefix, List<String> jvmOptions,
                                               List<String> startupFlags, String moduleMain, List<String> args)
            throws IOException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(ProcessHandle.current().info().command().orElseThrow(() -> new IllegalStateException("no java command")));
        cmd.add(EXIT_ON_OUT_OF_MEMORY);
        cmd.addAll(jvmOptions);
        cmd.addAll(startupFlags);
        cmd.addAll(List.of("--sun-misc-unsafe-memory-access=allow", "--enable-native-access=io.netty.common,ALL-UNNAMED",
                "-p", modulePath(), "--add-modules", "ALL-MODULE-PATH",
                "-m", moduleMain));
        cmd.addAll(args);
        Files.createDirectories(logDir);
        Path out = logDir.resolve(name + ".out");
        Path err = logDir.resolve(name + ".err");
        Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
        ManagerProcess m = new ManagerProcess(name, p, out, err);
        m.command = List.copyOf(cmd);
        Thread.ofPlatform().daemon(true).name("manager-out-" + name).start(m::pumpStdout);
        return m;
    }

    /**
     * The command line {@link #launch} runs, up to and including the main module ({@code java ... -m
     * orbitkv.server/orbitkv.server.cli.OrbitKvCommand}), with {@link #HEAP}: for a test that starts Managers from
     * another language (PythonClientGateTest hands it to the Python client's tests, which append {@code manager ...}).
     */
    public static List<String> launchCommand() {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElseThrow(() -> new IllegalStateException("no java command")));
        cmd.add(EXIT_ON_OUT_OF_MEMORY);
        cmd.add(HEAP);
        cmd.addAll(TEST_STARTUP);
        cmd.addAll(List.of("--sun-misc-unsafe-memory-access=allow", "--enable-native-access=io.netty.common,ALL-UNNAMED",
                "-p", modulePath(), "--add-modules", "ALL-MODULE-PATH", "-m", "orbitkv.server/orbitkv.server.cli.OrbitKvCommand"));
        return cmd;
    }

    /** Launches {@code orbitkv manager <args...>} and waits for its ready line. */
    public static ManagerProcess start(String name, Path logDir, List<String> managerArgs) throws IOException {
        List<String> args = new ArrayList<>();
        args.add("manager");
        args.addAll(managerArgs);
        ManagerProcess m = launch(name, logDir, args);
        m.awaitReady();
        return m;
    }

    /**
     * Arguments of {@code orbitkv manager} for a distributed Manager on loopback, the preamble every gate repeated:
     * {@code manager --cluster CLUSTER --node-id NODE --etcd ETCD --http-listen 127.0.0.1:0 --peer-listen 127.0.0.1:0
     * --dram-dir DRAM_DIR}, then {@code more} (the test's own options: sizes, lease, timings). Sizes and the lease are
     * left to the caller, since gates differ there ({@link #LOAD_TOLERANT_LEASE} or their own). The list is mutable:
     * callers append more options. For {@link #launch}, not {@link #start} (which adds {@code manager} itself).
     */
    public static List<String> distributedArgs(String cluster, String nodeId, String etcd, Path dramDir, String... more) {
        List<String> args = new ArrayList<>(List.of("manager", "--cluster", cluster, "--node-id", nodeId, "--etcd", etcd,
                "--http-listen", "127.0.0.1:0", "--peer-listen", "127.0.0.1:0", "--dram-dir", dramDir.toString()));
        args.addAll(List.of(more));
        return args;
    }

    private static String modulePath() {
        Set<String> entries = new LinkedHashSet<>();
        for (String prop : List.of("jdk.module.path", "java.class.path")) {
            String v = System.getProperty(prop, "");
            for (String e : v.split(File.pathSeparator)) {
                if (!e.isBlank() && !TEST_ONLY.matcher(e).find() && Files.exists(Path.of(e))) {
                    entries.add(e);
                }
            }
        }
        return String.join(File.pathSeparator, entries);
    }

    private void pumpStdout() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                Files.writeString(stdout, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                if (READY.matcher(line).matches()) {
                    ready.complete(line);
                }
            }
        } catch (IOException e) {
            ready.completeExceptionally(e);
        } finally {
            ready.completeExceptionally(new IllegalStateException(name + " closed its output without a ready line"));
        }
    }

    /** Waits for the ready line; fails with the process's stderr tail otherwise. */
    public String awaitReady() {
        return awaitReady(READY_BOUND);
    }

    /** Waits for the ready line up to {@code bound} (the soak's restarts on a machine at load 40 take longer). */
    public String awaitReady(Duration bound) {
        try {
            return ready.get(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw new AssertionError(name + " printed no ready line within " + bound.toSeconds() + " s (alive="
                    + process.isAlive() + "): " + e + "\nstderr: " + tail(stderr), e);
        }
    }

    private Matcher readyMatch() {
        Matcher m = READY.matcher(awaitReady());
        if (!m.matches()) {
            throw new IllegalStateException("ready line changed shape");
        }
        return m;
    }

    /** {@code http://HOST:PORT} of the HTTP API. */
    public String httpBase() {
        return "http://" + readyMatch().group(1);
    }

    public String peer() {
        return readyMatch().group(2);
    }

    /** {@code node/epoch/uuid}. */
    public String incarnation() {
        return readyMatch().group(3);
    }

    public String name() {
        return name;
    }

    /** The command line this process was launched with (java, JVM options, module, arguments). */
    public List<String> command() {
        return command;
    }

    public long pid() {
        return process.pid();
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** SIGKILL: no drain, no deregistration (the lease expires on its own). */
    public void kill9() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** Sends {@code SIG<sig>} (e.g. STOP, CONT) with {@code kill}; fails the test if it cannot be sent. */
    public void signal(String sig) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid())).inheritIO().start();
        if (!p.waitFor(5, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new AssertionError("kill -" + sig + " " + process.pid() + " failed");
        }
    }

    /** The files standard output and standard error go to. */
    public List<Path> logFiles() {
        return List.of(stdout, stderr);
    }

    /** The exit code if the process ended, else null. */
    public Integer exitCode() {
        return process.isAlive() ? null : process.exitValue();
    }

    /** SIGTERM (what {@code Process.destroy()} sends on Linux). */
    public void sigterm() {
        process.destroy();
    }

    /** The exit code within {@code bound}, or an AssertionError naming the process. */
    public int awaitExit(Duration bound) throws InterruptedException {
        if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError(name + " did not exit within " + bound.toMillis() + " ms");
        }
        return process.exitValue();
    }

    public String stdoutText() {
        try {
            return Files.exists(stdout) ? Files.readString(stdout, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String stderrText() {
        return tail(stderr);
    }

    private static String tail(Path p) {
        try {
            if (!Files.exists(p)) {
                return "";
            }
            String s = Files.readString(p, StandardCharsets.UTF_8);
            return s.length() > 4000 ? s.substring(s.length() - 4000) : s;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Deletes a test's working tree (logs, DRAM directories) after its processes are gone. */
    public static void deleteTree(Path root) throws IOException {
        if (root == null || !Files.exists(root)) {
            return;
        }
        try (var paths = Files.walk(root)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
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

    @Override
    public String toString() {
        return name + "(pid " + process.pid() + ")";
    }
}
