package orbitkv.conformance.campaign;

import static orbitkv.conformance.campaign.HostCommands.http;
import static orbitkv.conformance.campaign.HostCommands.run;
import static orbitkv.conformance.campaign.HostCommands.runQuietly;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import orbitkv.testing.Await;

/**
 * Three hosts as Linux network namespaces (issue 17 item 4): {@code okvc-h0..h2}, each with one {@code eth0}
 * at {@code 10.77.0.(i+1)/24}, joined by veth links to a bridge {@code okvc-br} in the root namespace
 * ({@code 10.77.0.254/24}: the test's own address toward them, where its fault proxies listen). Each host runs
 * an etcd member ({@code ip netns exec}); the campaign starts a Manager in each. Every address is one this
 * class assigns, on interfaces it creates; traffic goes nowhere else.
 *
 * <p>{@link #isolate} takes a host's veth down (a real partition of the host: its Manager and its etcd member
 * lose every peer), {@code false} brings it back. tc netem is missing from this kernel, so latency comes from
 * the campaign's user-space proxies, which sit between the namespaces (on the bridge address).
 *
 * <p>Creating namespaces needs root: {@link #create} fails with that reason instead of skipping. Leftovers of a
 * crashed run (every {@code okvc-} namespace, the bridge) are removed first, and {@link #close} removes
 * everything, also after a failure.
 */
final class NetnsHosts implements CampaignCluster.Hosts {
    static final String PREFIX = "okvc-";
    static final String BRIDGE = PREFIX + "br";
    static final String SUBNET = "10.77.0.";
    static final String BRIDGE_ADDRESS = SUBNET + "254";
    private static final Duration ETCD_READY = Duration.ofSeconds(30);

    private final int hosts;
    private final Path etcdBinary;
    private final Path work;
    private final List<EtcdMember> etcd = new ArrayList<>();
    /** Held from {@link #create} to {@link #close}: one gate per machine at a time. */
    private FileChannel machineLock;
    static final Path LOCK_FILE = Path.of("/tmp/orbitkv-netns-gate.lock");
    static final Duration LOCK_BOUND = Duration.ofMinutes(10);

    /** One etcd member process in a namespace. */
    private final class EtcdMember {
        final int index;
        final List<String> command;
        final Path log;
        Process process;

        EtcdMember(int index, String initialCluster, String token) throws IOException {
            this.index = index;
            String ip = address(index);
            Path data = Files.createDirectories(work.resolve("etcd-m" + index));
            this.log = work.resolve("etcd-m" + index + ".log");
            this.command = new ArrayList<>(prefix(index));
            command.addAll(List.of(etcdBinary.toString(), "--name", "m" + index, "--data-dir", data.toString(),
                    "--listen-client-urls", "http://" + ip + ":2379", "--advertise-client-urls", "http://" + ip + ":2379",
                    "--listen-peer-urls", "http://" + ip + ":2380", "--initial-advertise-peer-urls", "http://" + ip + ":2380",
                    "--initial-cluster", initialCluster, "--initial-cluster-state", "new", "--initial-cluster-token", token));
        }

        void launch() {
            try {
                process = new ProcessBuilder(command).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start etcd m" + index, e);
            }
        }

        void awaitHealthy() {
            Await.until("etcd m" + index + " in " + namespace(index) + " healthy (log " + log + ")", ETCD_READY,
                    () -> http(URI.create(etcdClientUrl(index) + "/health")).contains("\"health\":\"true\""));
        }

        boolean alive() {
            return process != null && process.isAlive();
        }

        void kill() {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private NetnsHosts(int hosts, Path etcdBinary, Path work) {
        this.hosts = hosts;
        this.etcdBinary = etcdBinary;
        this.work = work;
    }

    static String namespace(int host) {
        return PREFIX + "h" + host;
    }

    /**
     * Creates the namespaces, veths, bridge and addresses and starts the etcd members.
     *
     * @throws AssertionError naming the reason when the machine cannot create namespaces (not root)
     */
    static NetnsHosts create(int hosts, Path work) throws IOException {
        requireRoot(((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue());
        Path etcd = Path.of("/usr/bin/etcd");
        if (!Files.isExecutable(etcd)) {
            throw new AssertionError("the multi-host gate needs Debian's etcd-server (/usr/bin/etcd)");
        }
        FileChannel machineLock = exclusive();
        NetnsHosts h = new NetnsHosts(hosts, etcd, work);
        h.machineLock = machineLock;
        try {
            removeLeftovers();
            String routes = run("ip", "-4", "route", "show");
            if (routes.contains(SUBNET)) {
                throw new AssertionError("10.77.0.0/24 is already routed on this machine; the gate assigns it itself: " + routes);
            }
            run("ip", "link", "add", BRIDGE, "type", "bridge");
            run("ip", "addr", "add", BRIDGE_ADDRESS + "/24", "dev", BRIDGE);
            run("ip", "link", "set", BRIDGE, "up");
            for (int i = 0; i < hosts; i++) {
                String ns = namespace(i);
                run("ip", "netns", "add", ns);
                run("ip", "link", "add", veth(i), "type", "veth", "peer", "name", "eth0", "netns", ns);
                run("ip", "link", "set", veth(i), "master", BRIDGE, "up");
                run("ip", "-n", ns, "addr", "add", h.address(i) + "/24", "dev", "eth0");
                run("ip", "-n", ns, "link", "set", "eth0", "up");
                run("ip", "-n", ns, "link", "set", "lo", "up");
            }
            String token = "okvc-" + java.util.UUID.randomUUID();
            String initial = java.util.stream.IntStream.range(0, hosts)
                    .mapToObj(i -> "m" + i + "=http://" + h.address(i) + ":2380").collect(Collectors.joining(","));
            for (int i = 0; i < hosts; i++) {
                h.etcd.add(h.new EtcdMember(i, initial, token));
            }
            h.etcd.forEach(EtcdMember::launch);
            h.etcd.forEach(EtcdMember::awaitHealthy);
            return h;
        } catch (IOException | RuntimeException | AssertionError e) {
            h.close();
            throw e;
        }
    }

    /**
     * The gate's privilege check: {@code ip netns add} needs root (as another user it fails with "mount
     * --make-shared /run/netns failed: Operation not permitted").
     *
     * @throws AssertionError naming the reason (the gate fails, it never skips)
     */
    static void requireRoot(long uid) {
        if (uid != 0) {
            throw new AssertionError("the multi-host gate needs root to create network namespaces (ip netns add), "
                    + "and this test runs as uid " + uid + "; CI runs it as root. Not skipped: failed.");
        }
    }

    /**
     * The namespaces, bridge and subnet are fixed names on the machine: two gates at once (two builds on one
     * CI host) would remove each other's. The second waits for the first, bounded by {@link #LOCK_BOUND}.
     */
    private static FileChannel exclusive() throws IOException {
        FileChannel ch = FileChannel.open(LOCK_FILE, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
            Await.until("no other multi-host gate holds " + LOCK_FILE, LOCK_BOUND, Duration.ofMillis(500), () -> {
                try {
                    return ch.tryLock() != null;
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            return ch;
        } catch (RuntimeException | AssertionError e) {
            ch.close();
            throw e;
        }
    }

    private static String veth(int host) {
        return PREFIX + "v" + host;
    }

    /** Removes every {@code okvc-} namespace (killing what runs in it) and the bridge: leftovers of a crashed run. */
    static void removeLeftovers() throws IOException {
        for (String line : run("ip", "netns", "list").split("\n")) {
            String ns = line.split(" ")[0].strip();
            if (ns.startsWith(PREFIX)) {
                for (String pid : run("ip", "netns", "pids", ns).split("\\s+")) {
                    if (!pid.isBlank()) {
                        ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
                    }
                }
                runQuietly("ip", "netns", "del", ns);
            }
        }
        if (run("ip", "-o", "link", "show").contains(BRIDGE + ":")) {
            runQuietly("ip", "link", "del", BRIDGE);
        }
        for (String line : run("ip", "-o", "link", "show").split("\n")) {
            String[] parts = line.split(":\\s+");
            if (parts.length > 1 && parts[1].startsWith(PREFIX + "v")) {
                runQuietly("ip", "link", "del", parts[1].split("@")[0]);
            }
        }
    }

    @Override
    public URI etcdClientUrl(int i) {
        return URI.create("http://" + address(i) + ":2379");
    }

    @Override
    public List<String> prefix(int host) {
        return List.of("ip", "netns", "exec", namespace(host));
    }

    @Override
    public String address(int host) {
        return SUBNET + (host + 1);
    }

    /** Proxies listen on the bridge address: between the namespaces. */
    @Override
    public String proxyAddress() {
        return BRIDGE_ADDRESS;
    }

    @Override
    public int hosts() {
        return hosts;
    }

    @Override
    public String etcdctl(String... args) {
        String eps = etcd.stream().filter(EtcdMember::alive).map(m -> etcdClientUrl(m.index).toString())
                .collect(Collectors.joining(","));
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/etcdctl", "--endpoints=" + eps, "--command-timeout=5s"));
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

    @Override
    public CampaignCluster.EtcdMembers members() {
        return new CampaignCluster.EtcdMembers() {
            @Override
            public int size() {
                return etcd.size();
            }

            @Override
            public void kill(int i) {
                etcd.get(i).kill();
            }

            @Override
            public void restart(int i) {
                EtcdMember m = etcd.get(i);
                if (m.alive()) {
                    throw new IllegalStateException("etcd m" + i + " is running");
                }
                m.launch();
                m.awaitHealthy();
            }

            @Override
            public boolean alive(int i) {
                return etcd.get(i).alive();
            }
        };
    }

    /** Takes host {@code host}'s only link down (true) or up again (false): a real partition of the host. */
    @Override
    public boolean isolate(int host, boolean on) {
        try {
            run("ip", "link", "set", veth(host), on ? "down" : "up");
            return true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        for (EtcdMember m : etcd) {
            if (m.alive()) {
                m.kill();
            }
        }
        try {
            removeLeftovers();
        } catch (IOException e) {
            throw new UncheckedIOException("could not remove the gate's namespaces", e);
        } finally {
            try {
                machineLock.close(); // releases the lock
            } catch (IOException e) {
                // the lock goes with the process anyway
            }
        }
    }
}
