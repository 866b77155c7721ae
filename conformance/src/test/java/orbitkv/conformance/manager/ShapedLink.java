package orbitkv.conformance.manager;

import static orbitkv.conformance.campaign.HostCommands.http;
import static orbitkv.conformance.campaign.HostCommands.run;
import static orbitkv.conformance.campaign.HostCommands.runQuietly;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import orbitkv.testing.Await;

/**
 * Hosts as Linux network namespaces with one shaped link (issue 39 evaluation, DESIGN S6; ROUTE-11):
 * {@code okvs-h0} (the source), {@code okvs-h1} (the requester) and {@code okvs-h2} (one etcd member), each with one
 * {@code eth0} at {@code 10.78.0.(i+1)/24}, joined by veths {@code okvs-vI} to a bridge {@code okvs-br}
 * ({@code 10.78.0.254/24}) in the root namespace, where the harness runs. A prefix and subnet of their own, so they
 * never collide with the campaign's {@code okvc-} namespaces (NetnsHosts); etcd in a namespace of its own, so a
 * crashed run's etcd is removed with its namespace.
 *
 * <p>{@link #shape} puts a tbf qdisc (kernel token bucket) on a host's {@code eth0} egress: the direction restore
 * bytes travel from the source (a receiver's ingress is not shapeable by tbf, and netem is missing on this kernel).
 * {@link #linkBytes} reads what crossed that link from the root-side veth's rx counter (sysfs, no process per sample),
 * {@link #qdiscStats} the qdisc's own counters.
 *
 * <p>Needs root (fails naming it, never skips). Leftovers of a crashed run ({@code okvs-} namespaces with their
 * processes, veths, the bridge) are removed first, and {@link #close} removes everything, also after a failure. Every
 * address is one this class assigns, on interfaces it creates: traffic goes nowhere else.
 */
final class ShapedLink implements AutoCloseable {
    static final String PREFIX = "okvs-";
    static final String BRIDGE = PREFIX + "br";
    static final String SUBNET = "10.78.0.";
    static final String BRIDGE_ADDRESS = SUBNET + "254";
    static final Path LOCK_FILE = Path.of("/tmp/orbitkv-shaped-link.lock");
    private static final Pattern SENT = Pattern.compile("Sent (\\d+) bytes (\\d+) pkt \\(dropped (\\d+), overlimits (\\d+)");

    /** The namespace of the etcd member: the last one. */
    private final int etcdHost;
    private final Path work;
    private final FileChannel lockChannel;
    private Process etcd;
    private URI etcdUrl;

    private ShapedLink(int etcdHost, Path work, FileChannel lockChannel) {
        this.etcdHost = etcdHost;
        this.work = work;
        this.lockChannel = lockChannel;
    }

    /** Creates {@code hosts} Manager namespaces and one for etcd, veths, bridge and addresses, and starts etcd. */
    static ShapedLink create(int hosts, Path work) throws IOException {
        long uid = ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue();
        if (uid != 0) {
            throw new AssertionError("the shaped-link harness needs root for ip netns and tc; this runs as uid " + uid);
        }
        FileChannel ch = FileChannel.open(LOCK_FILE, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock = ch.tryLock();
        if (lock == null) {
            ch.close();
            throw new AssertionError("another shaped-link run holds " + LOCK_FILE);
        }
        ShapedLink h = new ShapedLink(hosts, work, ch);
        try {
            removeLeftovers();
            if (run("ip", "-4", "route", "show").contains(SUBNET)) {
                throw new AssertionError(SUBNET + "0/24 is already routed on this machine; the harness assigns it itself");
            }
            run("ip", "link", "add", BRIDGE, "type", "bridge");
            run("ip", "addr", "add", BRIDGE_ADDRESS + "/24", "dev", BRIDGE);
            run("ip", "link", "set", BRIDGE, "up");
            for (int i = 0; i <= hosts; i++) {
                String ns = namespace(i);
                run("ip", "netns", "add", ns);
                run("ip", "link", "add", veth(i), "type", "veth", "peer", "name", "eth0", "netns", ns);
                run("ip", "link", "set", veth(i), "master", BRIDGE, "up");
                run("ip", "-n", ns, "addr", "add", address(i) + "/24", "dev", "eth0");
                run("ip", "-n", ns, "link", "set", "eth0", "up");
                run("ip", "-n", ns, "link", "set", "lo", "up");
            }
            h.startEtcd();
            return h;
        } catch (IOException | RuntimeException | AssertionError e) {
            h.close();
            throw e;
        }
    }

    static String namespace(int host) {
        return PREFIX + "h" + host;
    }

    static String veth(int host) {
        return PREFIX + "v" + host;
    }

    static String address(int host) {
        return SUBNET + (host + 1);
    }

    /** The command prefix that runs a process in host {@code host}'s namespace ({@code ip netns exec} execs it). */
    static List<String> prefix(int host) {
        return List.of("ip", "netns", "exec", namespace(host));
    }

    URI etcdUrl() {
        return etcdUrl;
    }

    /** etcd alone in its namespace: its fixed ports are free there (a namespace of this run's own). */
    private void startEtcd() throws IOException {
        Path data = Files.createDirectories(work.resolve("etcd"));
        String c = "http://" + address(etcdHost) + ":2379";
        String p = "http://" + address(etcdHost) + ":2380";
        List<String> cmd = new ArrayList<>(prefix(etcdHost));
        cmd.addAll(List.of("/usr/bin/etcd", "--name", "s0", "--data-dir", data.toString(), "--listen-client-urls", c,
                "--advertise-client-urls", c, "--listen-peer-urls", p, "--initial-advertise-peer-urls", p,
                "--initial-cluster", "s0=" + p, "--initial-cluster-state", "new"));
        etcd = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(work.resolve("etcd.log").toFile()).start();
        etcdUrl = URI.create(c);
        Await.until("etcd on " + c + " healthy (log " + work.resolve("etcd.log") + ")", Duration.ofSeconds(30),
                () -> http(URI.create(c + "/health")).contains("\"health\":\"true\""));
    }

    /**
     * Shapes host {@code host}'s {@code eth0} egress to {@code rateMbit} with tbf ({@code burst}, {@code latency}: tc's
     * own syntax, e.g. {@code 256kb}, {@code 50ms}); replaces an earlier qdisc there.
     */
    void shape(int host, long rateMbit, String burst, String latency) throws IOException {
        run("tc", "-n", namespace(host), "qdisc", "replace", "dev", "eth0", "root", "tbf", "rate", rateMbit + "mbit",
                "burst", burst, "latency", latency);
    }

    /**
     * Sets {@code net.ipv4.tcp_slow_start_after_idle} in host {@code host}'s namespace (a new namespace starts with the
     * kernel's default, 1: a connection idle for one retransmission timeout restarts from the initial window).
     */
    void slowStartAfterIdle(int host, boolean on) throws IOException {
        run("ip", "netns", "exec", namespace(host), "sysctl", "-q", "-w",
                "net.ipv4.tcp_slow_start_after_idle=" + (on ? 1 : 0));
    }

    /** Bytes host {@code host} has sent through its (shaped) link so far: its root-side veth's rx counter. */
    static long linkBytes(int host) {
        try {
            return Long.parseLong(Files.readString(Path.of("/sys/class/net", veth(host), "statistics/rx_bytes")).strip());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The root qdisc of host {@code host}'s eth0: sent bytes, packets, drops, overlimits. */
    static long[] qdiscStats(int host) throws IOException {
        String out = run("tc", "-n", namespace(host), "-s", "qdisc", "show", "dev", "eth0");
        Matcher m = SENT.matcher(out);
        if (!m.find()) {
            throw new IOException("no Sent line in tc output: " + out);
        }
        return new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3)),
            Long.parseLong(m.group(4))};
    }

    /** The qdisc line of host {@code host}'s eth0 (what tc applied, for the report). */
    static String qdisc(int host) throws IOException {
        return run("tc", "-n", namespace(host), "qdisc", "show", "dev", "eth0").strip();
    }

    /** Removes every {@code okvs-} namespace (killing what runs in it), veth and the bridge. */
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
        for (String line : run("ip", "-o", "link", "show").split("\n")) {
            String[] parts = line.split(":\\s+");
            if (parts.length > 1 && parts[1].startsWith(PREFIX)) {
                runQuietly("ip", "link", "del", parts[1].split("@")[0]);
            }
        }
    }

    /** What of this fixture is left on the machine (namespaces, links). */
    static List<String> leftovers() throws IOException {
        List<String> out = new ArrayList<>();
        out.addAll(run("ip", "netns", "list").lines().filter(l -> l.startsWith(PREFIX)).toList());
        out.addAll(run("ip", "-o", "link", "show").lines().filter(l -> l.contains(PREFIX)).toList());
        return out;
    }

    @Override
    public void close() {
        try {
            if (etcd != null) {
                etcd.destroyForcibly();
                etcd.waitFor(10, TimeUnit.SECONDS);
            }
            removeLeftovers();
        } catch (IOException e) {
            throw new UncheckedIOException("could not remove the shaped link's namespaces", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            try {
                lockChannel.close();
            } catch (IOException e) {
                // the lock goes with the process anyway
            }
        }
    }
}
