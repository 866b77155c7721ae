package orbitkv.server.demo;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import orbitkv.membership.MembershipAdmin;

/**
 * {@code orbitkv demo}: a local etcd, three Managers on loopback (child processes of this program's own
 * launcher) and a workload with known payloads: saves, sync, restore with integrity checks, cross-node queries
 * and awaits, peer restores (each Manager restores another's blocks through the source's authorization and a TCP
 * or same-host shared-memory READ, verified byte for byte), evictions, a Manager killed with SIGKILL and restarted as a new incarnation, then SIGTERM of all.
 * It prints progress and a summary table, and always stops everything it started.
 *
 * <p>Publication-to-visibility (PERF-1, PERF-2) is measured on the ordinary publication path, without sync or
 * await: bursts on the first Manager each stop at a known terminal sequence; the source's
 * {@code last_publication {sequence, mono_ns}} and the observer's installed {@code {sequence, mono_ns}} for
 * the source's incarnation must both name exactly that sequence; both stamps come from the same host's
 * monotonic clock ({@code System.nanoTime}, CLOCK_MONOTONIC on Linux).
 */
public final class DemoWorkload {
    /** Bursts measured for publication-to-visibility, and blocks per burst. */
    static final int VISIBILITY_BURSTS = 200;
    static final int BURST_BLOCKS = 4;
    private static final String CLUSTER = "demo";
    private static final String NAMESPACE = "demo";
    private static final Duration BOUND = Duration.ofSeconds(60);
    /**
     * The demo Managers' lease: a Manager fences itself 6 s (TTL - margin) after an unconfirmed renewal send, and
     * a killed one is excluded about 8 s after its last renewal. It was 4 s - 1 s with a 1 s etcd call deadline,
     * which a Manager missed during startup on a machine at load ~15 (issue 25): it fenced and the demo never saw
     * all members.
     */
    private static final String LEASE_TTL_MS = "8000";
    private static final String FENCE_SAFETY_MARGIN_MS = "2000";
    private static final String ETCD_CALL_TIMEOUT_MS = "2000";

    /**
     * @param managers number of Managers (2..5)
     * @param blocks blocks saved per Manager (1..128)
     * @param blockBytes payload bytes per block (16..1 MiB)
     * @param etcdBinary the etcd executable
     */
    public record Options(int managers, int blocks, int blockBytes, String etcdBinary) {
        public Options {
            if (managers < 2 || managers > 5 || blocks < 1 || blocks > 128 || blockBytes < 16 || blockBytes > (1 << 20)) {
                throw new IllegalArgumentException("--managers must be 2..5, --blocks 1..128, --block-bytes 16..1048576");
            }
        }
    }

    private final Options options;
    private final PrintStream out;
    private final DemoSummary summary = new DemoSummary();
    private Path work;
    private final List<ChildProcess> children = new ArrayList<>();

    public DemoWorkload(Options options, PrintStream out) {
        this.options = options;
        this.out = out;
    }

    /** Runs the demo; returns 0 when no error was observed. */
    public int run() throws Exception {
        work = Files.createTempDirectory("orbitkv-demo-");
        LocalEtcd etcd = null;
        try {
            progress("starting etcd (" + options.etcdBinary() + ") in " + work);
            etcd = LocalEtcd.start(options.etcdBinary(), work.resolve("etcd"), work.resolve("logs"));
            try (MembershipAdmin admin = MembershipAdmin.connect(etcd.endpoints(), CLUSTER, BOUND.toMillis())) {
                if (!(admin.format() instanceof MembershipAdmin.Formatted f)) {
                    throw new IllegalStateException("orbitkv admin format was refused on a fresh etcd");
                }
                progress("formatted cluster " + CLUSTER + " (uuid " + f.cluster().uuid() + ")");
            }
            List<Node> nodes = new ArrayList<>();
            for (int i = 1; i <= options.managers(); i++) {
                nodes.add(startManager("n" + i, etcd));
            }
            for (Node n : nodes) {
                awaitMembers(n, nodes.size());
            }
            workload(nodes, etcd);
            stopAll(nodes);
        } catch (Exception e) {
            summary.error("demo aborted: " + e);
            throw e;
        } finally {
            children.forEach(ChildProcess::close);
            if (etcd != null) {
                etcd.close();
            }
            deleteTree(work);
            summary.print(out);
        }
        return summary.errors() == 0 ? 0 : 1;
    }

    /** One Manager: its process, client and identity from the ready line. */
    private record Node(String name, ChildProcess process, DemoClient client, String incarnation) {}

    private Node startManager(String name, LocalEtcd etcd) throws IOException {
        Path dram = Files.createDirectories(work.resolve("dram-" + name + "-" + children.size()));
        ChildProcess p = ChildProcess.start(name + "-" + children.size(), ChildProcess.selfCommand(List.of("manager",
                "--cluster", CLUSTER, "--node-id", name, "--etcd", etcd.endpoints().toString(),
                "--http-listen", "127.0.0.1:0", "--peer-listen", "127.0.0.1:0", "--dram", "64MiB",
                "--block-bytes-max", "1MiB", "--dram-dir", dram.toString(), "--lease-ttl-ms", LEASE_TTL_MS,
                "--fence-safety-margin-ms", FENCE_SAFETY_MARGIN_MS, "--renewal-interval-ms", "500",
                "--etcd-call-timeout-ms", ETCD_CALL_TIMEOUT_MS,
                // bounds that fit the demo's -Xmx256m (a Manager refuses bounds beyond its heap, docs/operations.md)
                "--index-budget-bytes", "64MiB", "--journal-retention-bytes-max", "16MiB",
                "--restore-bytes-in-flight-max", "64MiB",
                "--log-level", "WARN")), work.resolve("logs"), l -> l.startsWith("orbitkv manager ready "));
        children.add(p);
        String ready = p.awaitReady(BOUND);
        String http = field(ready, "http=");
        String incarnation = field(ready, "incarnation=");
        progress("manager " + name + " ready: http=" + http + " incarnation=" + incarnation);
        return new Node(name, p, new DemoClient(http), incarnation);
    }

    private void workload(List<Node> nodes, LocalEtcd etcd) throws Exception {
        Map<String, JsonNode> fences = new LinkedHashMap<>();
        Map<String, List<String>> keysOf = new LinkedHashMap<>();
        for (int i = 0; i < nodes.size(); i++) {
            Node n = nodes.get(i);
            keysOf.put(n.name(), save(n, i));
            DemoClient.Reply sync = n.client().sync();
            if (sync.status() != 200) {
                summary.error(n.name() + " sync answered " + sync.status() + " " + sync.code());
                continue;
            }
            fences.put(n.name(), sync.json().get("inventory_fence"));
            restoreAndVerify(n, keysOf.get(n.name()));
        }
        progress("saved, synced and restored on every Manager; querying and awaiting across nodes");
        for (Node requester : nodes) {
            String digest = requester.client().status().at("/scope/digest").asText();
            for (Node source : nodes) {
                if (source == requester) {
                    continue;
                }
                DemoClient.Reply a = requester.client().await(fences.get(source.name()), digest, 10_000);
                summary.awaitOutcome(a.status() == 200 ? "OK" : a.code());
                if (a.status() != 200) {
                    summary.error(requester.name() + " await of " + source.name() + "'s fence: " + a.status() + " " + a.code());
                }
                JsonNode q = requester.client().query(NAMESPACE, keysOf.get(source.name())).json();
                summary.coverage(q.get("coverage").asText());
                long[] fromSource = {0};
                q.get("candidates").forEach(c -> c.get("replicas").forEach(r -> {
                    if (!r.get("local").asBoolean()) {
                        summary.remoteCandidate();
                    }
                    if (r.at("/owner/incarnation").asText().equals(source.incarnation())) {
                        fromSource[0]++;
                    }
                }));
                if (fromSource[0] != options.blocks()) {
                    summary.error(requester.name() + " lists " + fromSource[0] + " of " + source.name() + "'s "
                            + options.blocks() + " blocks after a successful await");
                }
            }
        }
        peerRestores(nodes, keysOf);
        Node first = nodes.get(0);
        List<String> half = keysOf.get(first.name()).subList(0, Math.max(1, options.blocks() / 2));
        JsonNode ev = first.client().evict(NAMESPACE, half, "ALL").json();
        summary.evicted(ev.get("evicted").asLong());
        progress("evicted " + ev.get("evicted").asLong() + " residences on " + first.name() + ", head "
                + ev.get("head_sequence").asLong());
        evictionVisible(first, nodes.get(1), half);
        publicationToVisibility(first, nodes.get(1));
        killAndRestart(nodes, etcd, keysOf.get(first.name()));
    }

    /** The READ backends of peer restores, as the restore field {@code transfer_backend} names them. */
    static final List<String> BACKENDS = List.of("tcp", "shared-memory-preferred");

    /**
     * Issue 13 item 7: each Manager restores the next Manager's blocks (held only there) once per READ backend;
     * every block must come back byte for byte over a peer route of that backend, which the route header names.
     * READ throughput is the requesters' completed peer READ bytes over their summed READ latency (status).
     */
    private void peerRestores(List<Node> nodes, Map<String, List<String>> keysOf) throws IOException, InterruptedException {
        for (int i = 0; i < nodes.size(); i++) {
            Node requester = nodes.get(i);
            Node source = nodes.get((i + 1) % nodes.size());
            int generation = Integer.parseInt(source.name().substring(1));
            List<String> keys = keysOf.get(source.name());
            for (String backend : BACKENDS) {
                DemoClient.Reply r = requester.client().restore(NAMESPACE, keys, backend);
                String route = r.header("X-OrbitKV-Route");
                Map<String, byte[]> back = r.status() == 200 ? DemoClient.unframe(r.body()) : Map.of();
                String expected = backend.equals("tcp") ? "+tcp" : "+shm";
                for (int j = 0; j < keys.size(); j++) {
                    byte[] p = back.get(keys.get(j));
                    if (p == null || !Arrays.equals(p, DemoClient.payload(generation, j, options.blockBytes()))) {
                        summary.error(requester.name() + " peer restore (" + backend + ") of " + source.name() + "'s "
                                + keys.get(j) + ": " + (p == null ? "missing; route " + route : "payload mismatch"));
                    } else {
                        summary.peerRestored("peer-dram" + expected, p.length);
                    }
                }
                if (!route.contains("stop=complete") || !route.contains("peer-dram@") || !route.contains(expected)) {
                    summary.error(requester.name() + " peer restore (" + backend + ") route: " + route);
                }
            }
        }
        long[] tcp = new long[2];
        long[] shm = new long[2];
        for (Node n : nodes) {
            for (JsonNode route : n.client().status().at("/transfer/requester/routes")) {
                long[] sum = route.get("backend").asText().equals("tcp") ? tcp : shm;
                sum[0] += route.get("bytes").asLong();
                sum[1] += route.get("latency_sum_nanos").asLong();
            }
        }
        summary.readThroughput("tcp", tcp[0], tcp[1]);
        summary.readThroughput("shm", shm[0], shm[1]);
        progress("every Manager restored another's blocks over tcp and shared memory, verified byte for byte");
        Node source = nodes.get(1);
        int gen = Integer.parseInt(source.name().substring(1));
        List<String> keys = keysOf.get(source.name());
        new DemoThroughput(summary).measure(nodes.get(0).client(), source.client(), NAMESPACE, keys,
                java.util.stream.IntStream.range(0, keys.size()).mapToObj(j -> DemoClient.payload(gen, j, options.blockBytes())).toList());
        progress("measured warm, batched restores (local, peer over shm and tcp, a raw loopback socket)");
    }

    /** After evict + sync on {@code source} and await on {@code observer}, the observer lists none of them. */
    private void evictionVisible(Node source, Node observer, List<String> evictedKeys) throws IOException, InterruptedException {
        JsonNode fence = source.client().sync().json().get("inventory_fence");
        DemoClient.Reply a = observer.client().await(fence, observer.client().status().at("/scope/digest").asText(), 10_000);
        if (a.status() != 200) {
            summary.error(observer.name() + " await of the eviction fence: " + a.status() + " " + a.code());
            return;
        }
        long listed = remoteFrom(observer.client().query(NAMESPACE, evictedKeys).json(), source.incarnation());
        summary.evictionVisibility(evictedKeys.size() + " evicted, " + listed + " still listed on " + observer.name()
                + " after await");
        if (listed != 0) {
            summary.error(observer.name() + " still lists " + listed + " evicted replicas of " + source.name());
        }
    }

    private static long remoteFrom(JsonNode query, String incarnation) {
        long n = 0;
        for (JsonNode c : query.get("candidates")) {
            for (JsonNode r : c.get("replicas")) {
                if (r.at("/owner/incarnation").asText().equals(incarnation)) {
                    n++;
                }
            }
        }
        return n;
    }

    /**
     * PERF-1/PERF-2 on the ordinary publication path: each burst of {@link #BURST_BLOCKS} saves on
     * {@code source} ends at a terminal sequence (the save's head); once the source's last publication and the
     * observer's installed stamp for the source both name exactly it, the sample is installed mono_ns minus
     * published mono_ns. No sync and no await in the measured path.
     */
    private void publicationToVisibility(Node source, Node observer) throws Exception {
        long[] samples = new long[VISIBILITY_BURSTS];
        for (int b = 0; b < VISIBILITY_BURSTS; b++) {
            Map<String, byte[]> burst = new LinkedHashMap<>();
            for (int j = 0; j < BURST_BLOCKS; j++) {
                burst.put(String.format("%016x%016x", 0x100 + b, j), DemoClient.payload(0x100 + b, j, options.blockBytes()));
            }
            DemoClient.Reply r = source.client().save(NAMESPACE, burst);
            if (r.status() != 200) {
                throw new IllegalStateException("burst save answered " + r.status() + " " + r.code());
            }
            long terminal = r.json().get("head_sequence").asLong();
            JsonNode[] published = new JsonNode[1];
            JsonNode[] installed = new JsonNode[1];
            await(source.name() + " publishes through " + terminal, () -> {
                published[0] = statusField(source.client(), "/inventory/last_publication");
                return published[0] != null && published[0].get("sequence").asLong() == terminal;
            });
            await(observer.name() + " installs " + source.name() + " exactly through " + terminal, () -> {
                try {
                    JsonNode o = observer.client().ownerStatus(source.incarnation());
                    installed[0] = o == null ? null : o.get("installed");
                } catch (IOException e) {
                    return false;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
                return installed[0] != null && installed[0].get("sequence").asLong() == terminal;
            });
            samples[b] = installed[0].get("mono_ns").asLong() - published[0].get("mono_ns").asLong();
        }
        Arrays.sort(samples);
        summary.visibility(VISIBILITY_BURSTS, BURST_BLOCKS, samples[(int) Math.ceil(0.5 * samples.length) - 1],
                samples[(int) Math.ceil(0.99 * samples.length) - 1], samples[samples.length - 1]);
        progress("publication-to-visibility " + source.name() + " -> " + observer.name() + " over " + VISIBILITY_BURSTS
                + " bursts measured");
    }

    private static JsonNode statusField(DemoClient client, String pointer) {
        try {
            return client.status().at(pointer);
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private List<String> save(Node n, int index) throws IOException, InterruptedException {
        Map<String, byte[]> blocks = new LinkedHashMap<>();
        for (int j = 0; j < options.blocks(); j++) {
            blocks.put(String.format("%016x%016x", index + 1, j), DemoClient.payload(index + 1, j, options.blockBytes()));
        }
        DemoClient.Reply r = n.client().save(NAMESPACE, blocks);
        if (r.status() != 200) {
            summary.error(n.name() + " save answered " + r.status() + " " + r.code());
        } else {
            summary.saved(r.json().get("saved").size(), (long) options.blocks() * options.blockBytes());
        }
        return new ArrayList<>(blocks.keySet());
    }

    private void restoreAndVerify(Node n, List<String> keys) throws IOException, InterruptedException {
        DemoClient.Reply r = n.client().restore(NAMESPACE, keys);
        Map<String, byte[]> back = DemoClient.unframe(r.body());
        int index = Integer.parseInt(n.name().substring(1)) - 1;
        for (int j = 0; j < keys.size(); j++) {
            byte[] p = back.get(keys.get(j));
            if (p == null || !Arrays.equals(p, DemoClient.payload(index + 1, j, options.blockBytes()))) {
                summary.error(n.name() + " restore of " + keys.get(j) + ": " + (p == null ? "missing" : "payload mismatch"));
            } else {
                summary.restored(p.length);
            }
        }
    }

    private void killAndRestart(List<Node> nodes, LocalEtcd etcd, List<String> oldKeys) throws Exception {
        Node victim = nodes.get(0);
        Node observer = nodes.get(1);
        progress("kill -9 " + victim.name() + " (" + victim.incarnation() + ")");
        long t0 = System.nanoTime();
        victim.process().kill9();
        awaitMembers(observer, nodes.size() - 1);
        summary.exclusionMs((System.nanoTime() - t0) / 1_000_000);
        Node restarted = startManager(victim.name(), etcd);
        nodes.set(0, restarted);
        awaitMembers(observer, nodes.size());
        summary.restart(victim.incarnation(), restarted.incarnation());
        JsonNode status = restarted.client().status();
        if (status.at("/inventory/head_sequence").asLong() != 0) {
            summary.error("restarted " + victim.name() + " did not start a new journal lineage");
        }
        progress(victim.name() + " restarted as " + restarted.incarnation() + "; " + observer.name() + " admits it");
        // Re-bootstrap: the observer installs the new incarnation; nothing of the old one reappears.
        List<String> fresh = save(restarted, 0);
        JsonNode fence = restarted.client().sync().json().get("inventory_fence");
        DemoClient.Reply a = observer.client().await(fence, observer.client().status().at("/scope/digest").asText(), 15_000);
        long oldListed = remoteFrom(observer.client().query(NAMESPACE, oldKeys).json(), victim.incarnation());
        long newListed = remoteFrom(observer.client().query(NAMESPACE, fresh).json(), restarted.incarnation());
        summary.rebootstrap((a.status() == 200 ? "await OK" : "await " + a.code()) + ", " + newListed + "/" + fresh.size()
                + " new listed, " + oldListed + " old listed");
        if (a.status() != 200 || oldListed != 0 || newListed != fresh.size()) {
            summary.error(observer.name() + " re-bootstrap of " + restarted.incarnation() + ": await " + a.status()
                    + ", new listed " + newListed + ", old listed " + oldListed);
        }
    }

    private void stopAll(List<Node> nodes) throws InterruptedException {
        for (Node n : nodes) {
            int code = n.process().terminate(BOUND);
            summary.sigtermExit(code);
            if (code != 0) {
                summary.error(n.name() + " exited " + code + " after SIGTERM; stderr: " + n.process().stderrTail());
            }
        }
        progress("all Managers stopped with SIGTERM");
    }

    private void awaitMembers(Node n, int members) throws Exception {
        await(n.name() + " sees " + members + " members", () -> {
            try {
                return n.client().status().at("/membership/members").asInt() == members;
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        });
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + BOUND.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("not within " + BOUND.toSeconds() + " s: " + what);
            }
            Thread.sleep(50); // polling another process's status endpoint, bounded by BOUND
        }
    }

    private void progress(String line) {
        out.println("[demo] " + line);
        out.flush();
    }

    private static String field(String line, String prefix) {
        for (String part : line.split(" ")) {
            if (part.startsWith(prefix)) {
                return part.substring(prefix.length());
            }
        }
        throw new IllegalStateException("no " + prefix + " in '" + line + "'");
    }

    private static void deleteTree(Path root) throws IOException {
        if (root == null || !Files.exists(root)) {
            return;
        }
        try (var paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
