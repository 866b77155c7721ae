package orbitkv.conformance.campaign;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerApi;
import orbitkv.conformance.manager.ManagerProcess;
import orbitkv.conformance.peer.FaultProxy;
import orbitkv.conformance.peer.LinkFaults;
import orbitkv.membership.Endpoint;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.MembershipAdmin;

/**
 * The campaign's cluster (issue 17 item 2): a real 3-member etcd and real Manager processes, every one of whose
 * links goes through a {@link FaultProxy}: to each etcd member through a fixed-upstream proxy of its own, and
 * to every peer through its own HTTP CONNECT proxy (the JVM's {@code https.proxyHost}, which grpc-java's peer
 * channels follow), so a fault can hit one (Manager, etcd member) or one (Manager, peer) link.
 *
 * <p>{@link Hosts} says where things run: all on loopback, or one network namespace per host (the multi-host
 * gate); the cluster code is the same.
 */
final class CampaignCluster implements AutoCloseable {
    static final String NAMESPACE = "campaign";
    /** Lease timing: fence 5 s after the last confirmed renewal, heal attempts from 200 ms. */
    static final List<String> TIMING = List.of("--lease-ttl-ms", "6000", "--fence-safety-margin-ms", "1000",
            "--renewal-interval-ms", "500", "--etcd-call-timeout-ms", "1000", "--freshness-budget-ms", "3000",
            "--idle-liveness-ms", "500", "--heal-backoff-min-ms", "200", "--heal-backoff-max-ms", "2000");
    /** Session shapes that make snapshots multi-page and deltas multi-frame; a short journal for overruns. */
    static final List<String> SHAPES = List.of("--snapshot-page-records-max", "8", "--frame-input-records-max", "16",
            "--journal-retention-records-max", String.valueOf(CampaignCluster.JOURNAL_RECORDS), "--receive-window-bytes", "1MiB");
    static final int JOURNAL_RECORDS = 200;
    static final long RECEIVE_WINDOW_BYTES = 1 << 20;
    /** Lease TTL and local fence delay of the settings above. */
    static final Duration LEASE_TTL = Duration.ofMillis(6000);
    static final Duration FENCE_AFTER = Duration.ofMillis(5000);

    /** Where the etcd members and the Managers run. */
    interface Hosts extends AutoCloseable {
        /** The etcd client URL of member {@code i} as the Managers of host {@code host} reach it (before proxies). */
        URI etcdClientUrl(int i);

        /** Command prefix running a process on host {@code host} (empty on loopback). */
        List<String> prefix(int host);

        /** The address a Manager of host {@code host} listens on. */
        String address(int host);

        /** The address the fault proxies listen on (reachable from every host). */
        default String proxyAddress() {
            return "127.0.0.1";
        }

        /**
         * Cuts host {@code host} off from every other host (true) or reconnects it (false) at the network
         * level; false if these hosts cannot, and the cluster then partitions all of its proxied links.
         */
        default boolean isolate(int host, boolean on) {
            return false;
        }

        /** Number of hosts (Managers). */
        int hosts();

        /** etcdctl against the live members. */
        String etcdctl(String... args);

        /** The etcd member handles: kill, restart. */
        EtcdMembers members();

        @Override
        void close();
    }

    /** The etcd members, whatever runs them. */
    interface EtcdMembers {
        int size();

        void kill(int i);

        void restart(int i);

        boolean alive(int i);
    }

    /** Loopback hosts over an {@link EtcdFixture} 3-member cluster. */
    static final class Loopback implements Hosts {
        final EtcdFixture etcd = EtcdFixture.cluster(3);
        private final int hosts;

        Loopback(int hosts) throws IOException {
            this.hosts = hosts;
            etcd.start();
        }

        @Override
        public URI etcdClientUrl(int i) {
            return etcd.member(i).clientUrl();
        }

        @Override
        public List<String> prefix(int host) {
            return List.of();
        }

        @Override
        public String address(int host) {
            return "127.0.0.1";
        }

        @Override
        public int hosts() {
            return hosts;
        }

        @Override
        public String etcdctl(String... args) {
            return etcd.etcdctl(args);
        }

        @Override
        public EtcdMembers members() {
            return new EtcdMembers() {
                @Override
                public int size() {
                    return etcd.members().size();
                }

                @Override
                public void kill(int i) {
                    etcd.member(i).kill();
                }

                @Override
                public void restart(int i) {
                    etcd.member(i).restart();
                }

                @Override
                public boolean alive(int i) {
                    return etcd.member(i).alive();
                }
            };
        }

        @Override
        public void close() {
            etcd.close();
        }
    }

    /** One Manager host: its process (restarted at will) and its proxies (fixed for the campaign). */
    final class Node {
        final String name;
        final int host;
        final List<FaultProxy> etcdLinks = new ArrayList<>();
        final FaultProxy egress;
        final Path dramDir;
        ManagerProcess process;
        ManagerApi api;
        String incarnation;
        Endpoint peer;
        /** Every incarnation this node had, oldest first (the current one last). */
        final List<String> incarnations = new ArrayList<>();
        boolean stopped;
        int launches;

        Node(String name, int host) throws IOException {
            this.name = name;
            this.host = host;
            java.net.InetAddress bind = java.net.InetAddress.getByName(hosts.proxyAddress());
            for (int i = 0; i < 3; i++) {
                URI u = hosts.etcdClientUrl(i);
                etcdLinks.add(FaultProxy.builder().listen(bind, 0).upstream(new Endpoint(u.getHost(), u.getPort()))
                        .seed(seed + i).name(name + "-etcd" + i).build());
            }
            egress = FaultProxy.builder().listen(bind, 0).connectProxy().http2().seed(seed + 7).name(name + "-egress").build();
            dramDir = Files.createDirectories(work.resolve("dram-" + name));
        }

        boolean live() {
            return process != null && process.alive();
        }

        String etcdUrls() {
            return etcdLinks.stream().map(p -> p.url().toString()).collect(Collectors.joining(","));
        }

        /** Starts the Manager (crash points armed if {@code crashpoints} is not empty) and waits for its ready line. */
        void start(String crashpoints) throws IOException {
            List<String> jvm = new ArrayList<>(List.of("-Xmx192m", "-Dhttps.proxyHost=" + egress.endpoint().host(),
                    "-Dhttps.proxyPort=" + egress.endpoint().port(), "-Dhttp.nonProxyHosts="));
            if (!crashpoints.isEmpty()) {
                jvm.add("-Dorbitkv.crashpoints=" + crashpoints);
            }
            List<String> args = new ArrayList<>(List.of("manager", "--cluster", cluster, "--node-id", name,
                    "--etcd", etcdUrls(), "--http-listen", hosts.address(host) + ":0", "--peer-listen", hosts.address(host) + ":0",
                    "--dram", "32MiB", "--block-bytes-max", "64KiB", "--dram-dir", dramDir.toString()));
            args.addAll(TIMING);
            args.addAll(SHAPES);
            args.addAll(ManagerArgs.SMALL_BOUNDS);
            process = ManagerProcess.launch(name + "-" + (++launches), work.resolve("logs"), hosts.prefix(host), jvm, args);
            allProcesses.add(process);
            stopped = false;
            try {
                process.awaitReady();
            } catch (AssertionError notReady) {
                if (!crashpoints.isEmpty() && haltedAtCrashPoint()) {
                    incarnation = null; // halted while starting (e.g. staging its first bootstrap): never served
                    return;
                }
                throw notReady;
            }
            api = new ManagerApi(process.httpBase(), Duration.ofSeconds(8));
            incarnation = process.incarnation();
            incarnations.add(incarnation);
            String[] hp = process.peer().split(":");
            peer = new Endpoint(hp[0], Integer.parseInt(hp[1]));
            stopped = false;
            applyPeerFaults();
        }

        private boolean haltedAtCrashPoint() {
            try {
                return process.awaitExit(Duration.ofSeconds(10)) == orbitkv.membership.CrashPoints.EXIT_STATUS;
            } catch (InterruptedException | AssertionError e) {
                return false;
            }
        }

        /** The incarnation the node reports now (a heal changes it without a restart); null if it does not answer. */
        String refreshIncarnation() {
            try {
                JsonNode s = api.status();
                String now = s.at("/self/incarnation").asText();
                if (!now.isEmpty() && !now.equals(incarnation)) {
                    incarnation = now;
                    incarnations.add(now);
                }
                return now;
            } catch (RuntimeException | AssertionError e) {
                return null;
            }
        }

        @Override
        public String toString() {
            return name + (process == null ? "" : "(" + process + ")");
        }
    }

    final Hosts hosts;
    final long seed;
    final Path work;
    final String cluster = "campaign-" + UUID.randomUUID().toString().substring(0, 8);
    final Map<String, Node> nodes = new LinkedHashMap<>();
    final List<ManagerProcess> allProcesses = new ArrayList<>();
    /** Directed peer links (from, to) and their faults, re-applied to the current endpoints at every start. */
    private final Map<List<String>, LinkFaults> peerFaults = new java.util.concurrent.ConcurrentHashMap<>();

    CampaignCluster(Hosts hosts, long seed, Path work) throws IOException {
        this.hosts = hosts;
        this.seed = seed;
        this.work = work;
        try (MembershipAdmin admin = MembershipAdmin.connect(new EtcdEndpoints(
                List.of(hosts.etcdClientUrl(0), hosts.etcdClientUrl(1), hosts.etcdClientUrl(2))), cluster, 5_000)) {
            if (!(admin.format() instanceof MembershipAdmin.Formatted)) {
                throw new IllegalStateException("cannot format cluster " + cluster);
            }
        }
        for (int h = 0; h < hosts.hosts(); h++) {
            String name = String.valueOf((char) ('a' + h));
            nodes.put(name, new Node(name, h));
        }
    }

    /** Starts every node (no crash points). */
    void startAll() throws IOException {
        for (Node n : nodes.values()) {
            n.start("");
        }
    }

    List<Node> live() {
        return nodes.values().stream().filter(Node::live).toList();
    }

    Node node(String name) {
        return nodes.get(name);
    }

    /** Current incarnations of every live node. */
    Set<String> currentIncarnations() {
        return live().stream().map(n -> n.incarnation).collect(Collectors.toSet());
    }

    // ------------------------------------------------------------------ faults

    /** Faults of the directed peer link from {@code from} to {@code to} (null heals it). */
    void peerLink(String from, String to, LinkFaults f) {
        if (f == null || f.none()) {
            peerFaults.remove(List.of(from, to));
        } else {
            peerFaults.put(List.of(from, to), f);
        }
        applyPeerFaults();
    }

    /** Faults of every peer link. */
    void allPeerLinks(LinkFaults f) {
        for (Node a : nodes.values()) {
            for (Node b : nodes.values()) {
                if (a != b) {
                    peerLink(a.name, b.name, f);
                }
            }
        }
    }

    /** Faults of all of one node's etcd links. */
    void etcdLinks(String node, LinkFaults f) {
        for (FaultProxy p : nodes.get(node).etcdLinks) {
            p.faults(f);
        }
    }

    /** Every link healed. */
    void healLinks() {
        peerFaults.clear();
        for (Node n : nodes.values()) {
            n.egress.heal();
            n.etcdLinks.forEach(FaultProxy::heal);
        }
    }

    /** Re-keys the peer faults to the current peer endpoints (a restart changes a node's port). */
    private synchronized void applyPeerFaults() {
        for (Node from : nodes.values()) {
            for (Node to : nodes.values()) {
                if (from != to && to.peer != null) {
                    from.egress.faults(to.peer, peerFaults.get(List.of(from.name, to.name)));
                }
            }
        }
    }

    /**
     * Isolates a node's host from everything (true) or heals it (false): at the network level where the hosts
     * can (network namespaces: the host's link goes down, its etcd member is cut off too), else by partitioning
     * every proxied link of the node (its etcd links, its peer links both ways).
     */
    void isolate(Node n, boolean on) {
        if (hosts.isolate(n.host, on)) {
            return;
        }
        LinkFaults f = on ? LinkFaults.PARTITION : null;
        etcdLinks(n.name, on ? LinkFaults.PARTITION : LinkFaults.NONE);
        for (Node other : nodes.values()) {
            if (other != n) {
                peerLink(n.name, other.name, f);
                peerLink(other.name, n.name, f);
            }
        }
    }

    /** The etcd lease of {@code node}'s member record, hex (for etcdctl lease revoke), or null. */
    String leaseOf(String node) {
        String json = hosts.etcdctl("get", "/orbitkv/v2/" + cluster + "/members/" + node, "-w", "json");
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"lease\":(\\d+)").matcher(json);
        return m.find() ? Long.toHexString(Long.parseLong(m.group(1))) : null;
    }

    @Override
    public void close() {
        for (Node n : nodes.values()) {
            if (n.process != null && n.stopped) {
                try {
                    n.process.signal("CONT");
                } catch (IOException | InterruptedException | AssertionError e) {
                    // killing it anyway
                }
            }
        }
        allProcesses.forEach(ManagerProcess::close);
        for (Node n : nodes.values()) {
            closeQuietly(n.egress);
            n.etcdLinks.forEach(CampaignCluster::closeQuietly);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // best effort
        }
    }
}
