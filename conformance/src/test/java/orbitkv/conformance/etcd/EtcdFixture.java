package orbitkv.conformance.etcd;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import orbitkv.membership.EtcdEndpoints;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Real etcd for the conformance gates (DESIGN §10): a JUnit 5 extension that starts {@code etcd}
 * processes on free loopback ports with temporary data directories, as one member or as an n-member
 * cluster, and can kill (SIGKILL), stop (SIGSTOP), continue (SIGCONT) and restart a member by PID.
 * Use it as {@code @RegisterExtension static final EtcdFixture ETCD = EtcdFixture.singleNode();}; it
 * starts before the class's tests and always cleans up (processes and data directories) after them.
 *
 * <p>The runtime is chosen by {@link EtcdRuntimeSelection}: a missing etcd fails the run, never skips it.
 */
public final class EtcdFixture implements BeforeAllCallback, AfterAllCallback {
    private static final Duration READY_BOUND = Duration.ofSeconds(30);
    private final int size;
    private final List<Member> members = new ArrayList<>();
    private Path root;
    private Path etcdctl;

    private EtcdFixture(int size) {
        if (size < 1 || size > 7) {
            throw new IllegalArgumentException("cluster size must be 1..7, got " + size);
        }
        this.size = size;
    }

    public static EtcdFixture singleNode() {
        return new EtcdFixture(1);
    }

    public static EtcdFixture cluster(int size) {
        return new EtcdFixture(size);
    }

    /** One etcd member process. */
    public final class Member {
        final int index;
        final String name;
        final int clientPort;
        final int peerPort;
        final int metricsPort;
        final Path dataDir;
        final Path log;
        Process process;

        Member(int index, int clientPort, int peerPort, int metricsPort) {
            this.index = index;
            this.name = "m" + index;
            this.clientPort = clientPort;
            this.peerPort = peerPort;
            this.metricsPort = metricsPort;
            this.dataDir = root.resolve(name);
            this.log = root.resolve(name + ".log");
        }

        public URI clientUrl() {
            return URI.create("http://127.0.0.1:" + clientPort);
        }

        public URI metricsUrl() {
            return URI.create("http://127.0.0.1:" + metricsPort + "/metrics");
        }

        public long pid() {
            return process.pid();
        }

        public boolean alive() {
            return process != null && process.isAlive();
        }

        /** SIGKILL, then wait for the process to be gone. */
        public void kill() {
            process.destroyForcibly();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    throw new AssertionError("etcd " + name + " survived SIGKILL for 10 s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** SIGSTOP: the process keeps its sockets but answers nothing. */
        public void stop() {
            signal("STOP");
        }

        /** SIGCONT after {@link #stop()}. */
        public void cont() {
            signal("CONT");
        }

        /** Starts the process again on the same ports and data directory and waits until it is healthy. */
        public void restart() {
            if (alive()) {
                throw new IllegalStateException("etcd " + name + " is running");
            }
            launch(this);
            awaitHealthy(this);
        }

        /** True iff /metrics says this member leads. */
        public boolean isLeader() {
            return alive() && metricValue(scrape(this), "etcd_server_is_leader") == 1.0;
        }

        private void signal(String sig) {
            try {
                Process p = new ProcessBuilder("kill", "-" + sig, Long.toString(pid())).inheritIO().start();
                if (!p.waitFor(5, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    throw new AssertionError("kill -" + sig + " " + pid() + " failed");
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public String toString() {
            return name + "@" + clientUrl();
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
    }

    /** Starts the members and waits (bounded) until every one reports healthy. */
    public void start() throws IOException {
        EtcdRuntimeSelection.Selection selection = EtcdRuntimeSelection.select();
        Path binary = switch (selection) {
            case EtcdRuntimeSelection.Selection.LocalBinary b -> b.etcd();
            case EtcdRuntimeSelection.Selection.Missing m -> throw new AssertionError(m.message());
            case EtcdRuntimeSelection.Selection.Testcontainers t -> throw new AssertionError(
                    "a Docker engine answers but no local etcd binary exists; the Testcontainers runtime is "
                            + "not implemented yet: install the Debian package etcd-server");
        };
        etcdctl = binary.resolveSibling("etcdctl");
        root = Files.createTempDirectory("orbitkv-etcd-");
        int[] ports = freePorts(3 * size);
        for (int i = 0; i < size; i++) {
            members.add(new Member(i, ports[3 * i], ports[3 * i + 1], ports[3 * i + 2]));
        }
        String token = "orbitkv-" + UUID.randomUUID();
        String initialCluster = members.stream().map(m -> m.name + "=http://127.0.0.1:" + m.peerPort)
                .collect(Collectors.joining(","));
        for (Member m : members) {
            m.process = null;
            commands.add(List.of(binary.toString(),
                    "--name", m.name,
                    "--data-dir", m.dataDir.toString(),
                    "--listen-client-urls", "http://127.0.0.1:" + m.clientPort,
                    "--advertise-client-urls", "http://127.0.0.1:" + m.clientPort,
                    "--listen-peer-urls", "http://127.0.0.1:" + m.peerPort,
                    "--initial-advertise-peer-urls", "http://127.0.0.1:" + m.peerPort,
                    "--listen-metrics-urls", "http://127.0.0.1:" + m.metricsPort,
                    "--initial-cluster", initialCluster,
                    "--initial-cluster-state", "new",
                    "--initial-cluster-token", token));
            launch(m);
        }
        for (Member m : members) {
            awaitHealthy(m);
        }
    }

    private final List<List<String>> commands = new ArrayList<>();

    private void launch(Member m) {
        try {
            m.process = new ProcessBuilder(commands.get(m.index)).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(m.log.toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start etcd " + m.name, e);
        }
    }

    private void awaitHealthy(Member m) {
        try {
            Await.until("etcd " + m + " healthy (log: " + m.log + ")", READY_BOUND, () -> {
                if (!m.process.isAlive()) {
                    throw new AssertionError("etcd " + m.name + " exited with " + m.process.exitValue() + "; log: " + tail(m.log));
                }
                return http(URI.create(m.clientUrl() + "/health")).contains("\"health\":\"true\"");
            });
        } catch (AssertionError e) {
            close();
            throw e;
        }
    }

    /** All members, in index order. */
    public List<Member> members() {
        return List.copyOf(members);
    }

    public Member member(int index) {
        return members.get(index);
    }

    /** The current leader among live members (bounded wait for an election). */
    public Member leader() {
        Member[] found = new Member[1];
        Await.until("an etcd leader", Duration.ofSeconds(15), () -> {
            for (Member m : members) {
                if (m.isLeader()) {
                    found[0] = m;
                    return true;
                }
            }
            return false;
        });
        return found[0];
    }

    /** The client URLs of all members, as {@code --etcd} takes them. */
    public EtcdEndpoints endpoints() {
        return new EtcdEndpoints(members.stream().map(Member::clientUrl).toList());
    }

    /** {@code etcdctl put key value} against the live members. */
    public void put(String key, String value) {
        etcdctl("put", key, "--", value);
    }

    /** {@code etcdctl get --print-value-only key}: the value, or null when absent. */
    public String get(String key) {
        String out = etcdctl("get", "--print-value-only", key);
        return out.isEmpty() ? null : out.endsWith("\n") ? out.substring(0, out.length() - 1) : out;
    }

    /** Keys under a prefix, sorted. */
    public List<String> keys(String prefix) {
        String out = etcdctl("get", "--prefix", "--keys-only", prefix);
        return out.lines().filter(l -> !l.isBlank()).sorted().toList();
    }

    /** The store's current revision. */
    public long revision() {
        String json = etcdctl("get", "/", "-w", "json");
        Matcher m = Pattern.compile("\"revision\":(\\d+)").matcher(json);
        if (!m.find()) {
            throw new AssertionError("no revision in etcdctl output: " + json);
        }
        return Long.parseLong(m.group(1));
    }

    /** Compacts the history up to the current revision (a watch behind it gets a compaction error). */
    public long compactToCurrent() {
        long rev = revision();
        etcdctl("compact", Long.toString(rev));
        return rev;
    }

    /** Runs etcdctl with the live members' endpoints; fails the test on a non-zero exit. */
    public String etcdctl(String... args) {
        String eps = members.stream().filter(Member::alive).map(m -> m.clientUrl().toString())
                .collect(Collectors.joining(","));
        List<String> cmd = new ArrayList<>(List.of(etcdctl.toString(), "--endpoints=" + eps, "--command-timeout=5s"));
        cmd.addAll(List.of(args));
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.environment().put("ETCDCTL_API", "3");
            Process p = pb.start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(15, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new AssertionError("etcdctl " + String.join(" ", args) + " failed: " + new String(out, StandardCharsets.UTF_8));
            }
            return new String(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted");
        }
    }

    /** The Prometheus text of a member's /metrics endpoint. */
    public String scrape(Member m) {
        return http(m.metricsUrl());
    }

    /** Sum of every sample of {@code metric} (any labels) in a Prometheus text. */
    public static double metricValue(String text, String metric) {
        double sum = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith(metric + " ") || line.startsWith(metric + "{")) {
                String[] parts = line.trim().split("\\s+");
                sum += Double.parseDouble(parts[parts.length - 1]);
            }
        }
        return sum;
    }

    /** Stops every member (SIGCONT first so a stopped one can die) and deletes the data directories. */
    public void close() {
        for (Member m : members) {
            if (m.process != null && m.process.isAlive()) {
                m.cont();
                m.kill();
            }
        }
        if (root != null) {
            try (Stream<Path> walk = Files.walk(root)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                // best effort: the directory is under the system temp dir
            }
        }
        members.clear();
        commands.clear();
    }

    private static String http(URI uri) {
        try {
            HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
            c.setConnectTimeout(1000);
            c.setReadTimeout(2000);
            try (InputStream in = c.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } finally {
                c.disconnect();
            }
        } catch (IOException e) {
            return "";
        }
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no log)";
        }
    }

    private static int[] freePorts(int n) throws IOException {
        int[] ports = new int[n];
        List<ServerSocket> held = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                held.add(s);
                ports[i] = s.getLocalPort();
            }
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
        return ports;
    }
}
