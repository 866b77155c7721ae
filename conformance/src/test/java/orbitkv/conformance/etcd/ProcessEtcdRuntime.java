package orbitkv.conformance.etcd;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The local-process runtime: real {@code etcd} processes of the Debian binary on free loopback ports with
 * temporary data directories; kill is SIGKILL, stop/cont are SIGSTOP/SIGCONT by PID, and restart starts
 * the same command line again on the same ports and data directory. etcdctl is the sibling binary.
 */
final class ProcessEtcdRuntime implements EtcdRuntime {
    private final Path binary;
    private final Path etcdctl;
    private final List<Member> members = new ArrayList<>();
    private Path root;

    ProcessEtcdRuntime(Path binary) {
        this.binary = binary;
        this.etcdctl = binary.resolveSibling("etcdctl");
    }

    /** One etcd member process. */
    final class Member implements MemberHandle {
        final String name;
        final int clientPort;
        final int peerPort;
        final int metricsPort;
        final Path dataDir;
        final Path log;
        List<String> command;
        Process process;

        Member(int index, int clientPort, int peerPort, int metricsPort) {
            this.name = "m" + index;
            this.clientPort = clientPort;
            this.peerPort = peerPort;
            this.metricsPort = metricsPort;
            this.dataDir = root.resolve(name);
            this.log = root.resolve(name + ".log");
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public URI clientUrl() {
            return URI.create("http://127.0.0.1:" + clientPort);
        }

        @Override
        public URI metricsUrl() {
            return URI.create("http://127.0.0.1:" + metricsPort + "/metrics");
        }

        @Override
        public long pid() {
            return process.pid();
        }

        @Override
        public boolean alive() {
            return process != null && process.isAlive();
        }

        /** SIGKILL, then wait for the process to be gone. */
        @Override
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
        @Override
        public void stop() {
            signal("STOP");
        }

        /** SIGCONT after {@link #stop()}. */
        @Override
        public void cont() {
            signal("CONT");
        }

        /** Starts the process again on the same ports and data directory. */
        @Override
        public void relaunch() {
            launch(this);
        }

        @Override
        public String deathReport() {
            return process.isAlive() ? null : "exited with " + process.exitValue() + "; log: " + tail(log);
        }

        @Override
        public String logLocation() {
            return log.toString();
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
    }

    @Override
    public List<MemberHandle> launch(int size) throws IOException {
        root = Files.createTempDirectory("orbitkv-etcd-");
        int[] ports = EtcdRuntime.freeLoopbackPorts(3 * size);
        for (int i = 0; i < size; i++) {
            members.add(new Member(i, ports[3 * i], ports[3 * i + 1], ports[3 * i + 2]));
        }
        String token = "orbitkv-" + UUID.randomUUID();
        String initialCluster = members.stream().map(m -> m.name + "=http://127.0.0.1:" + m.peerPort)
                .collect(Collectors.joining(","));
        for (Member m : members) {
            m.command = List.of(binary.toString(),
                    "--name", m.name,
                    "--data-dir", m.dataDir.toString(),
                    "--listen-client-urls", "http://127.0.0.1:" + m.clientPort,
                    "--advertise-client-urls", "http://127.0.0.1:" + m.clientPort,
                    "--listen-peer-urls", "http://127.0.0.1:" + m.peerPort,
                    "--initial-advertise-peer-urls", "http://127.0.0.1:" + m.peerPort,
                    "--listen-metrics-urls", "http://127.0.0.1:" + m.metricsPort,
                    "--initial-cluster", initialCluster,
                    "--initial-cluster-state", "new",
                    "--initial-cluster-token", token);
            launch(m);
        }
        return List.copyOf(members);
    }

    private void launch(Member m) {
        try {
            m.process = new ProcessBuilder(m.command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(m.log.toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start etcd " + m.name, e);
        }
    }

    @Override
    public String etcdctl(List<MemberHandle> live, List<String> args) {
        String eps = live.stream().map(m -> m.clientUrl().toString()).collect(Collectors.joining(","));
        List<String> cmd = new ArrayList<>(List.of(etcdctl.toString(), "--endpoints=" + eps));
        cmd.addAll(args);
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

    /** Kills every member (SIGCONT first so a stopped one can die) and deletes the data directories. */
    @Override
    public void close() {
        for (Member m : members) {
            if (m.alive()) {
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
            root = null;
        }
        members.clear();
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no log)";
        }
    }
}
