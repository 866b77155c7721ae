package orbitkv.conformance.perf;

import com.fasterxml.jackson.databind.JsonNode;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.util.MutableHandlerRegistry;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerApi;
import orbitkv.conformance.manager.ManagerProcess;
import orbitkv.inventory.CoalescedInterval;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySessionServer;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ReadOutcome;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.SourceSessionStatus;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipAdmin;
import orbitkv.membership.MembershipConfig;
import orbitkv.membership.NodeId;
import orbitkv.membership.Registrant;
import orbitkv.membership.RegistrationResult;

/**
 * The scaling matrix of issue 19 (design <em>Performance acceptance and ablations</em>: one dimension at a time from
 * the 16-owner cell of part 1; <em>Resource bounds and scheduling</em>; <em>Diagnostics</em>). A cell is N
 * metadata-only peers (an {@link InventorySource} each, served by its own {@link InventorySessionServer} on its own
 * loopback gRPC server and registered with real etcd membership) and one requester: a real Manager process
 * (the runtime image's JVM settings) whose subscriber opens one InventorySession per admitted peer into its
 * GlobalIndex. The peers replay part 1's seeded trace ({@link EtcdLoadHarness.Trace}); each owner's period ends at a
 * terminal sequence that the requester must install exactly (its own {@code owners[].installed} stamp, read from
 * its status) before that owner's next period, so every sample is s2.10-performance-v2's ordinary publication →
 * install endpoint, bound to the owner's incarnation, the requester's view id and the exact sequence.
 *
 * <p>Processes: 3 — this JVM (all N peers, the trace driver and the status sampler), the requester Manager's JVM,
 * one etcd. The harness checks that the requester shares its clock domain ({@link ClockDomain}).
 *
 * <p>Beyond the configured envelope the cell expects a <em>refusal</em>, and asserts it, instead of measuring a
 * capacity: more admitted peers than {@code --peer-sessions-max} must be listed in {@code sessions.beyond_limit}
 * with {@code capacity_complete} false, {@code /health} degraded and coverage PartialHints, and every admitted peer
 * is either served or listed (BND-3: never skipped silently); owner views that do not fit {@code
 * --index-budget-bytes} must be withdrawn (owner state WITHDRAWN) while coverage says PartialHints (SNAP-12).
 * Refused peers keep their churn (open loop); only served peers are sampled.
 */
public final class ScalingHarness {
    /** Update pattern of a period. */
    public enum Updates {
        /** The period's mutations spread evenly over it (the terminal one last). */
        CONSTANT,
        /** The period's mutations back to back at its start (part 1's cell). */
        BURSTY
    }

    /** What a cell expects of the configured envelope. */
    public enum Envelope {
        /** Within every configured bound: any refusal fails the cell. */
        WITHIN,
        /** More peers than {@code --peer-sessions-max}: the refusal must be reported (BND-3). */
        BEYOND_SESSIONS,
        /** More rows than {@code --index-budget-bytes}: views withdrawn and reported (SNAP-12). */
        BEYOND_INDEX_BUDGET
    }

    /**
     * One cell.
     *
     * @param dimension the dimension this cell varies ("base" for the 16-owner cell)
     * @param label a short label
     * @param peers metadata-only peers (owners)
     * @param residences residences per owner loaded before the requester starts
     * @param repeatPercent share of a period's mutations re-putting a hot residence (repeated-key churn)
     * @param namespaces namespaces of the trace
     * @param scoped the requester subscribes to namespace 0 only ({@code --metadata-namespace}); else AllNamespaces
     * @param peerSessionsMax {@code --peer-sessions-max} (0: the default, 128)
     * @param indexBudgetBytes {@code --index-budget-bytes} (0: the default, 256 MiB)
     */
    public record Cell(String dimension, String label, int peers, int residences, Updates updates, int repeatPercent, int namespaces,
            boolean scoped, int peerSessionsMax, long indexBudgetBytes, Envelope envelope) {
        public Cell {
            if (peers < 1 || residences < 0 || repeatPercent < 0 || repeatPercent > 90 || namespaces < 1 || peerSessionsMax < 0
                    || indexBudgetBytes < 0) {
                throw new IllegalArgumentException("invalid scaling cell: " + label);
            }
            if ((envelope == Envelope.BEYOND_SESSIONS) != (peerSessionsMax > 0 && peerSessionsMax < peers)) {
                throw new IllegalArgumentException(label + ": BEYOND_SESSIONS iff 0 < peerSessionsMax < peers");
            }
            if ((envelope == Envelope.BEYOND_INDEX_BUDGET) != (indexBudgetBytes > 0)) {
                throw new IllegalArgumentException(label + ": BEYOND_INDEX_BUDGET iff an index budget is set");
            }
        }

        /** Part 1's 16-owner cell: 4,096 residences, bursty, 50 % repeated keys, 4 namespaces, all-domain. */
        public static Cell base() {
            return new Cell("base", "16 peers (base)", 16, 4096, Updates.BURSTY, 50, 4, false, 0, 0, Envelope.WITHIN);
        }

        Cell with(String dim, String lbl, int p, int r, Updates u, int rep, int ns, boolean sc) {
            return new Cell(dim, lbl, p, r, u, rep, ns, sc, 0, 0, Envelope.WITHIN);
        }
    }

    /** The formal matrix: the base cell, then one dimension at a time, then the two beyond-envelope cells. */
    public static List<Cell> matrix(Set<String> dimensions) {
        Cell b = Cell.base();
        List<Cell> out = new ArrayList<>();
        out.add(b);
        if (dimensions.contains("peers")) {
            for (int p : new int[] {1, 4, 32, 64}) {
                out.add(b.with("peers", p + " peers", p, b.residences(), b.updates(), b.repeatPercent(), b.namespaces(), false));
            }
        }
        if (dimensions.contains("residences")) {
            for (int r : new int[] {512, 32_768}) {
                out.add(b.with("residences", r + " residences/owner", b.peers(), r, b.updates(), b.repeatPercent(), b.namespaces(), false));
            }
        }
        if (dimensions.contains("updates")) {
            out.add(b.with("updates", "constant updates", b.peers(), b.residences(), Updates.CONSTANT, b.repeatPercent(), b.namespaces(), false));
        }
        if (dimensions.contains("churn")) {
            for (int c : new int[] {0, 90}) {
                out.add(b.with("churn", c + " % repeated keys", b.peers(), b.residences(), b.updates(), c, b.namespaces(), false));
            }
        }
        if (dimensions.contains("namespaces")) {
            out.add(b.with("namespaces", "1 ns all-domain", b.peers(), b.residences(), b.updates(), b.repeatPercent(), 1, false));
            out.add(b.with("namespaces", "1 ns scoped", b.peers(), b.residences(), b.updates(), b.repeatPercent(), 1, true));
            out.add(b.with("namespaces", "4 ns scoped", b.peers(), b.residences(), b.updates(), b.repeatPercent(), 4, true));
            out.add(b.with("namespaces", "16 ns all-domain", b.peers(), b.residences(), b.updates(), b.repeatPercent(), 16, false));
            out.add(b.with("namespaces", "16 ns scoped", b.peers(), b.residences(), b.updates(), b.repeatPercent(), 16, true));
        }
        if (dimensions.contains("envelope")) {
            out.add(new Cell("envelope", "64 peers, --peer-sessions-max 48", 64, b.residences(), b.updates(), b.repeatPercent(),
                    b.namespaces(), false, 48, 0, Envelope.BEYOND_SESSIONS));
            out.add(new Cell("envelope", "16 x 32,768 residences, --index-budget-bytes 32MiB", 16, 32_768, b.updates(), b.repeatPercent(),
                    b.namespaces(), false, 0, 32L << 20, Envelope.BEYOND_INDEX_BUDGET));
        }
        return out;
    }

    /**
     * Parameters shared by every cell.
     *
     * @param burst mutations per owner period (the last is the terminal put in namespace 0)
     * @param deletePercent share of a period's mutations deleting a hot residence
     * @param cadenceMs owner period
     * @param warmup warm-up samples per cell (at least, over all served owners)
     * @param samples measured samples per cell (at least)
     * @param minSeconds a measured window lasts at least this long
     * @param idleSeconds an idle window before the churn (the requester's baseline: liveness and the status polls)
     * @param pollMs the status sampler's period (each poll is a full status page the requester serves: its CPU counts
     *     in the requester's figures and in the idle baseline, so the period is a trade-off against the owners' cycle)
     * @param bootstrapSeconds bound on the requester's first views (and on the refusal becoming visible)
     */
    public record Settings(List<Cell> cells, int burst, int deletePercent, long cadenceMs, int warmup, int samples, long minSeconds,
            long idleSeconds, long pollMs, long bootstrapSeconds) {
        public Settings {
            if (cells.isEmpty() || burst < 1 || deletePercent < 0 || deletePercent > 10 || cadenceMs < 1 || warmup < 0 || samples < 1
                    || minSeconds < 0 || idleSeconds < 0 || pollMs < 1 || bootstrapSeconds < 1) {
                throw new IllegalArgumentException("invalid scaling settings");
            }
            cells = List.copyOf(cells);
        }

        /** {@code bench.scaling.*} properties; the defaults are the formal matrix. */
        public static Settings fromProperties() {
            Set<String> dims = new HashSet<>(List.of(System.getProperty("bench.scaling.dimensions",
                    "peers,residences,updates,churn,namespaces,envelope").split(",")));
            return new Settings(matrix(dims), Integer.getInteger("bench.scaling.burst", 16), Integer.getInteger("bench.scaling.deletePercent", 10),
                    Long.getLong("bench.scaling.cadenceMs", 50), Integer.getInteger("bench.scaling.warmup", 50),
                    Integer.getInteger("bench.scaling.samples", 1000), Long.getLong("bench.scaling.minSeconds", 60),
                    Long.getLong("bench.scaling.idleSeconds", 10), Long.getLong("bench.scaling.pollMs", 10),
                    Long.getLong("bench.scaling.bootstrapSeconds", 300));
        }
    }

    /** A process's CPU over a window and its memory at the window's end. */
    public record ProcessFigures(String name, double coreSeconds, double coresBusy, long rssBytes, long rssPeakBytes, double idleCoresBusy) {}

    /** The reported refusal of a beyond-envelope cell (empty for WITHIN). */
    public record Refusal(Envelope kind, int admitted, int served, List<String> refusedPeers, String coverage, String health, String detail) {}

    /**
     * One cell's figures.
     *
     * @param visibilityNs measured ordinary publication → install samples of served owners
     * @param sessionBytesPerS data-frame bytes per second per served session (source side, ledgered), mean and max
     * @param sessionFramesPerS data frames per second per served session (source side), mean and max
     * @param requesterBytesPerS encoded frame bytes/s received by the requester (its /metrics), all sessions
     * @param requesterFramesPerS frames/s received by the requester (its /metrics), all sessions
     * @param indexBytes requester index budget bytes used at the window's end; {@code indexPeakBytes} its high-water mark
     * @param indexRows rows of the requester's installed views at the window's end
     * @param creditPeakBytes the highest per-session outstanding credit (the source's send queue) of any served session
     * @param journalPeakBytes the highest journal peak bytes of any peer
     * @param filterCpuCoresBusy source read CPU (InventorySource#read of the window's journal under the cell's scope,
     *     replayed period by period on one thread) per second of window, summed over owners
     */
    public record Result(Cell cell, long[] visibilityNs, double windowSeconds, double mutationsPerS, double[] sessionBytesPerS,
            double[] sessionFramesPerS, double requesterBytesPerS, double requesterFramesPerS, long indexBytes, long indexPeakBytes,
            long indexRows, long creditPeakBytes, long journalPeakBytes, double filterCpuCoresBusy, List<ProcessFigures> processes,
            EtcdLoadHarness.EtcdRates etcd, double pollsPerS, double statusBytesPerS, int sessionReconnects, Refusal refusal,
            long refusalEventsDuringWindow) {
        Stats stats() {
            return Stats.of(visibilityNs);
        }

        double bytesPerRow() {
            return indexRows == 0 ? Double.NaN : (double) indexBytes / indexRows;
        }

        ProcessFigures process(String name) {
            return processes.stream().filter(p -> p.name().equals(name)).findFirst().orElseThrow();
        }
    }

    /** A beyond-envelope cell whose refusal was not reported as the design requires (BND-3, SNAP-12). */
    public static final class EnvelopeViolation extends AssertionError {
        EnvelopeViolation(String message) {
            super(message);
        }
    }

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private final Settings settings;
    private final BenchRun run;
    private final EtcdFixture etcd;
    private final Path work;

    public ScalingHarness(Settings settings, BenchRun run, EtcdFixture etcd, Path work) {
        this.settings = settings;
        this.run = run;
        this.etcd = etcd;
        this.work = work;
    }

    /** Runs every cell in order, writes raw samples and prints the tables and plots. */
    public List<Result> run() throws Exception {
        run.report("scaling matrix (issue 19): " + settings.cells().size() + " cells; burst " + settings.burst() + " mutations per "
                + settings.cadenceMs() + " ms per owner, " + settings.deletePercent() + " % deletes; >= " + settings.warmup() + " warm-up + >= "
                + settings.samples() + " measured samples, window >= " + settings.minSeconds() + " s, idle baseline " + settings.idleSeconds()
                + " s, status poll " + settings.pollMs() + " ms; processes: this JVM (peers, driver, sampler), the requester Manager, etcd");
        List<Result> out = new ArrayList<>();
        for (Cell c : settings.cells()) {
            run.report("cell " + c.label() + " (" + c + ")");
            Result r = cell(c);
            out.add(r);
            List<String> rows = new ArrayList<>();
            for (long v : r.visibilityNs()) {
                rows.add(Long.toString(v));
            }
            run.csv("scaling-" + c.label().replaceAll("[^A-Za-z0-9]+", "-") + ".csv", "visibility_ns", rows);
            run.report("  " + line(r));
        }
        report(out);
        return out;
    }

    // ------------------------------------------------------------------ the peers

    /** N metadata-only peers in this JVM: a source, a gRPC server, a membership and a session server each. */
    private final class Peers implements AutoCloseable {
        final String cluster = "scale-" + UUID.randomUUID().toString().substring(0, 8);
        final List<InventorySource> sources;
        final List<Server> servers = new ArrayList<>();
        final List<Membership> members = new ArrayList<>();
        final List<InventorySessionServer> sessionServers = new ArrayList<>();
        final List<String> incarnations = new ArrayList<>();

        Peers(List<InventorySource> sources) throws Exception {
            this.sources = sources;
            try (MembershipAdmin admin = MembershipAdmin.connect(etcd.endpoints(), cluster, 5_000)) {
                if (!(admin.format() instanceof MembershipAdmin.Formatted)) {
                    throw new IllegalStateException("cannot format " + cluster);
                }
            }
            List<MutableHandlerRegistry> registries = new ArrayList<>();
            for (int i = 0; i < sources.size(); i++) {
                MutableHandlerRegistry reg = new MutableHandlerRegistry();
                servers.add(NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).fallbackHandlerRegistry(reg).build().start());
                registries.add(reg);
            }
            // Registration in parallel (each is an etcd transaction, a lease and a watch); order kept by index.
            ExecutorService pool = Executors.newFixedThreadPool(Math.min(8, sources.size()));
            try {
                List<Future<Membership>> regs = new ArrayList<>();
                for (int i = 0; i < sources.size(); i++) {
                    int port = servers.get(i).getPort();
                    String node = "peer-" + i;
                    regs.add(pool.submit(() -> register(node, port)));
                }
                for (Future<Membership> f : regs) {
                    members.add(f.get(60, TimeUnit.SECONDS));
                }
            } finally {
                pool.shutdownNow();
            }
            for (int i = 0; i < sources.size(); i++) {
                Membership m = members.get(i);
                InventorySessionServer server = InventorySessionServer.create(sources.get(i), m.cluster(), m.incarnation(), m::view,
                        SessionConfig.defaults());
                registries.get(i).addService(server.bindableService());
                m.addListener(e -> server.onMembership(m.view()));
                sessionServers.add(server);
                incarnations.add(m.incarnation().toString());
            }
        }

        private Membership register(String node, int port) {
            RegistrationResult r = Membership.register(etcd.endpoints(), new Registrant(cluster, new NodeId(node),
                    new Endpoint("127.0.0.1", port), new Endpoint("127.0.0.1", 1)), MembershipConfig.defaults());
            if (!(r instanceof RegistrationResult.Registered reg)) {
                throw new IllegalStateException("registration of " + node + " failed: " + r);
            }
            return reg.membership();
        }

        /** The session of peer {@code i} serving {@code requester}, by session id (a reconnect is a new id). */
        Map<UUID, SourceSessionStatus> sessions(int i, String requester) {
            Map<UUID, SourceSessionStatus> out = new HashMap<>();
            for (SourceSessionStatus s : sessionServers.get(i).status()) {
                if (s.requester() != null && s.requester().toString().equals(requester)) {
                    out.put(s.sessionId(), s);
                }
            }
            return out;
        }

        @Override
        public void close() throws Exception {
            sessionServers.forEach(InventorySessionServer::close);
            for (Server s : servers) {
                s.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            members.forEach(Membership::close);
        }
    }

    private List<Namespace> namespaces(int n) {
        List<Namespace> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(Namespace.utf8("bench/model-" + i + "/fp16"));
        }
        return out;
    }

    private ManagerProcess requester(Cell c, String cluster, Path dir) throws Exception {
        List<String> args = new ArrayList<>(List.of("manager", "--cluster", cluster, "--node-id", "requester", "--etcd",
                etcd.endpoints().toString(), "--http-listen", "127.0.0.1:0", "--peer-listen", "127.0.0.1:0", "--dram", "64MiB",
                "--block-bytes-max", "1MiB", "--dram-dir", Files.createDirectories(dir.resolve("dram")).toString()));
        if (c.scoped()) {
            args.addAll(List.of("--metadata-namespace", "bench/model-0/fp16"));
        }
        if (c.peerSessionsMax() > 0) {
            args.addAll(List.of("--peer-sessions-max", Integer.toString(c.peerSessionsMax())));
        }
        if (c.indexBudgetBytes() > 0) {
            args.addAll(List.of("--index-budget-bytes", (c.indexBudgetBytes() >> 10) + "KiB"));
        }
        ManagerProcess m = ManagerProcess.launchAsImage("requester", dir.resolve("logs"), args);
        m.awaitReady();
        return m;
    }

    // ------------------------------------------------------------------ one cell

    private Result cell(Cell c) throws Exception {
        long t0 = System.nanoTime();
        List<Namespace> namespaces = namespaces(c.namespaces());
        List<InventorySource> sources = new ArrayList<>();
        List<EtcdLoadHarness.Trace> traces = new ArrayList<>();
        for (int i = 0; i < c.peers(); i++) {
            InventorySource s = InventorySource.create(InventoryConfig.defaults());
            EtcdLoadHarness.Trace t = new EtcdLoadHarness.Trace(i, namespaces);
            for (int r = 0; r < c.residences(); r++) {
                s.put(t.freshKey(namespaces.get(r % namespaces.size())), r % 2 == 0 ? Medium.DRAM : Medium.SSD, 4096);
            }
            sources.add(s);
            traces.add(t);
        }
        Path dir = Files.createTempDirectory(work, "cell-");
        try (Peers peers = new Peers(sources); ManagerProcess req = requester(c, peers.cluster, dir)) {
            ClockDomain.Domain domain = ClockDomain.check(List.of(req.pid()));
            ManagerApi api = new ManagerApi(req.httpBase());
            String self = req.incarnation();
            try (StatusSampler sampler = new StatusSampler(req.httpBase(), Duration.ofMillis(settings.pollMs()), p -> {})) {
                Duration bound = Duration.ofSeconds(settings.bootstrapSeconds());
                Refusal refusal = switch (c.envelope()) {
                    case WITHIN -> within(c, peers, sampler, bound);
                    case BEYOND_SESSIONS -> beyondSessions(c, peers, api, sampler, bound);
                    case BEYOND_INDEX_BUDGET -> beyondIndex(c, peers, api, sampler, bound);
                };
                run.report(String.format("  set-up (peers, registration, requester start, bootstrap%s): %.1f s", refusal == null ? ""
                        : ", refusal", (System.nanoTime() - t0) / 1e9));
                Set<String> served = new TreeSet<>(peers.incarnations);
                if (refusal != null) {
                    served.removeAll(refusal.refusedPeers());
                    run.report("  refusal reported (not capacity): " + refusal);
                }
                Result r = measure(c, peers, traces, req, api, sampler, self, served, refusal);
                ClockDomain.requireSameBoot(domain);
                return r;
            }
        } finally {
            ManagerProcess.deleteTree(dir);
        }
    }

    /** Within the envelope: every peer's view installed at its head, coverage complete, no refusal. */
    private Refusal within(Cell c, Peers peers, StatusSampler sampler, Duration bound) {
        awaitInstalledAtHead(peers, sampler, peers.incarnations, bound);
        JsonNode s = sampler.awaitStatus(st -> "CompleteAtWatermarks".equals(st.get("coverage").asText()), bound,
                c.label() + ": coverage CompleteAtWatermarks");
        if (!s.at("/sessions/capacity_complete").asBoolean() || s.at("/sessions/beyond_limit").size() != 0) {
            throw new EnvelopeViolation(c.label() + ": a cell within the envelope reports incomplete capacity: " + s.get("sessions"));
        }
        return null;
    }

    private void awaitInstalledAtHead(Peers peers, StatusSampler sampler, List<String> which, Duration bound) {
        for (String inc : which) {
            long head = peers.sources.get(peers.incarnations.indexOf(inc)).headSequence();
            sampler.await(inc, r -> "INSTALLED".equals(r.state()) && r.installedSequence() >= head, bound, "installed view of " + inc + " at " + head);
        }
    }

    /**
     * BND-3 at N peers: exactly {@code peerSessionsMax} sessions, the other admitted peers listed in
     * {@code beyond_limit}, capacity incomplete, /health degraded, coverage PartialHints; every admitted peer is
     * served or listed, none twice, none silently skipped.
     */
    private Refusal beyondSessions(Cell c, Peers peers, ManagerApi api, StatusSampler sampler, Duration bound) {
        int limit = c.peerSessionsMax();
        JsonNode s = sampler.awaitStatus(st -> st.at("/sessions/admitted_sources").asInt() == c.peers()
                && st.at("/sessions/requester").size() == limit && st.at("/sessions/beyond_limit").size() == c.peers() - limit, bound,
                c.label() + ": " + c.peers() + " admitted sources, " + limit + " sessions, " + (c.peers() - limit) + " beyond the limit");
        JsonNode sessions = s.get("sessions");
        Set<String> servedSet = new TreeSet<>();
        sessions.get("requester").forEach(r -> servedSet.add(r.at("/source/incarnation").asText()));
        Set<String> listed = new TreeSet<>();
        sessions.get("beyond_limit").forEach(b -> listed.add(b.asText()));
        Set<String> all = new TreeSet<>(peers.incarnations);
        Set<String> union = new TreeSet<>(servedSet);
        union.addAll(listed);
        List<String> problems = new ArrayList<>();
        if (sessions.get("sessions_per_requester_max").asInt() != limit) {
            problems.add("sessions_per_requester_max " + sessions.get("sessions_per_requester_max") + " != " + limit);
        }
        if (sessions.get("capacity_complete").asBoolean()) {
            problems.add("capacity_complete is true with " + listed.size() + " peers beyond the limit");
        }
        if (!Collections.disjoint(servedSet, listed)) {
            problems.add("a peer is both served and listed beyond the limit");
        }
        if (!union.equals(all)) {
            Set<String> missing = new TreeSet<>(all);
            missing.removeAll(union);
            problems.add("admitted peers neither served nor listed (silently skipped): " + missing);
        }
        String health = api.health().get("status").asText();
        if (!"degraded".equals(health)) {
            problems.add("/health is " + health + ", not degraded");
        }
        String coverage = s.get("coverage").asText();
        if (!"PartialHints".equals(coverage)) {
            problems.add("coverage is " + coverage + ", not PartialHints");
        }
        if (!problems.isEmpty()) {
            throw new EnvelopeViolation("BND-3 at " + c.peers() + " peers with --peer-sessions-max " + limit + ": " + problems);
        }
        awaitInstalledAtHead(peers, sampler, new ArrayList<>(servedSet), bound);
        JsonNode after = sampler.latest();
        if (!"PartialHints".equals(after.get("coverage").asText())) {
            throw new EnvelopeViolation("BND-3: with every served view installed, coverage must stay PartialHints while peers are beyond "
                    + "the limit; it is " + after.get("coverage"));
        }
        return new Refusal(Envelope.BEYOND_SESSIONS, c.peers(), servedSet.size(), new ArrayList<>(listed), coverage, health,
                listed.size() + " admitted peers beyond --peer-sessions-max " + limit + " listed in sessions.beyond_limit; capacity_complete false");
    }

    /**
     * SNAP-12 beyond the index budget: owner views that do not fit are withdrawn (state WITHDRAWN), coverage is
     * PartialHints, every admitted peer has an owner row (none skipped); the installed ones are served.
     */
    private Refusal beyondIndex(Cell c, Peers peers, ManagerApi api, StatusSampler sampler, Duration bound) {
        // Wait until the split is stable: for 3 s every peer is INSTALLED at its head or not installed after having been
        // WITHDRAWN (its retries may show BOOTSTRAPPING in between), with at least one of each.
        long[] stableSince = {-1};
        Set<String> installed = new TreeSet<>();
        Set<String> withdrawnEver = new TreeSet<>();
        sampler.awaitStatus(st -> {
            Set<String> inst = new TreeSet<>();
            boolean settled = st.get("owners").size() == c.peers();
            for (JsonNode o : st.get("owners")) {
                String inc = o.at("/owner/incarnation").asText();
                int i = peers.incarnations.indexOf(inc);
                if (i < 0) {
                    continue;
                }
                long head = peers.sources.get(i).headSequence();
                if ("WITHDRAWN".equals(o.get("state").asText())) {
                    withdrawnEver.add(inc);
                }
                if ("INSTALLED".equals(o.get("state").asText()) && o.at("/installed/sequence").asLong(-1) >= head) {
                    inst.add(inc);
                } else if (!withdrawnEver.contains(inc)) {
                    settled = false;
                }
            }
            settled &= !inst.isEmpty() && inst.size() < c.peers();
            if (!settled || !inst.equals(installed)) {
                installed.clear();
                installed.addAll(inst);
                stableSince[0] = settled ? System.nanoTime() : -1;
                return false;
            }
            return System.nanoTime() - stableSince[0] >= 3_000_000_000L;
        }, bound, c.label() + ": a stable split into installed views and views withdrawn for the index budget", st -> {
            StringBuilder b = new StringBuilder("coverage " + st.get("coverage").asText() + ", owners:");
            for (JsonNode o : st.get("owners")) {
                b.append(' ').append(o.at("/owner/node_id").asText()).append('=').append(o.get("state").asText()).append('/')
                        .append(o.at("/installed/sequence").asText()).append('/').append(o.get("last_reset_cause").asText(""));
            }
            return b.toString();
        });
        JsonNode s = sampler.latest();
        List<String> problems = new ArrayList<>();
        Set<String> rowsSeen = new TreeSet<>();
        s.get("owners").forEach(o -> rowsSeen.add(o.at("/owner/incarnation").asText()));
        if (!rowsSeen.containsAll(peers.incarnations)) {
            problems.add("admitted peers without an owner row: silently skipped");
        }
        String coverage = s.get("coverage").asText();
        if (!"PartialHints".equals(coverage)) {
            problems.add("coverage is " + coverage + " with withdrawn views, not PartialHints");
        }
        String metrics = api.get("/metrics").text();
        double used = PromText.sum(metrics, "orbitkv_index_budget_bytes_used");
        if (used > c.indexBudgetBytes()) {
            problems.add("index budget used " + used + " > " + c.indexBudgetBytes());
        }
        if (!problems.isEmpty()) {
            throw new EnvelopeViolation("SNAP-12 beyond --index-budget-bytes " + c.indexBudgetBytes() + ": " + problems);
        }
        List<String> refused = new ArrayList<>(peers.incarnations);
        refused.removeAll(installed);
        return new Refusal(Envelope.BEYOND_INDEX_BUDGET, c.peers(), installed.size(), refused, coverage, api.health().get("status").asText(),
                refused.size() + " owner views withdrawn (state WITHDRAWN, SNAP-12) at --index-budget-bytes " + (c.indexBudgetBytes() >> 10) + " KiB, "
                        + (long) used + " bytes used");
    }

    // ------------------------------------------------------------------ the measured window

    /** Everything read at one edge of a window. */
    private record Edge(long nanos, EtcdLoadHarness.Scrape etcd, String requesterMetrics, ProcStat.ProcessSample requester,
            ProcStat.ProcessSample self, ProcStat.ProcessSample etcdProcess, long mutations, long polls, long statusBytes,
            List<Map<UUID, SourceSessionStatus>> sessions) {}

    private Edge edge(Peers peers, ManagerApi api, ManagerProcess req, StatusSampler sampler, String self) {
        List<Map<UUID, SourceSessionStatus>> sessions = new ArrayList<>();
        for (int i = 0; i < peers.sources.size(); i++) {
            sessions.add(peers.sessions(i, self));
        }
        return new Edge(System.nanoTime(), EtcdLoadHarness.scrape(etcd), api.get("/metrics").text(), ProcStat.process(req.pid()),
                ProcStat.process(ProcessHandle.current().pid()), ProcStat.process(etcd.member(0).pid()),
                peers.sources.stream().mapToLong(InventorySource::headSequence).sum(), sampler.polls(), sampler.responseBytes(), sessions);
    }

    private Result measure(Cell c, Peers peers, List<EtcdLoadHarness.Trace> traces, ManagerProcess req, ManagerApi api,
            StatusSampler sampler, String self, Set<String> served, Refusal refusal) throws Exception {
        // Idle baseline: the requester's and this JVM's CPU with sessions idle and the sampler polling.
        Edge idle0 = edge(peers, api, req, sampler, self);
        EtcdLoadHarness.Await.sleepCadence(Duration.ofSeconds(settings.idleSeconds()));
        Edge idle1 = edge(peers, api, req, sampler, self);

        int owners = c.peers();
        int servedCount = served.size();
        Map<String, String> viewIds = new HashMap<>();
        for (String inc : served) {
            viewIds.put(inc, sampler.row(inc).orElseThrow().viewId());
        }
        int warmPerOwner = (settings.warmup() + servedCount - 1) / servedCount;
        int measuredPerOwner = (settings.samples() + servedCount - 1) / servedCount;
        Edge[] edges = new Edge[2];
        long[] headsAtStart = new long[owners];
        AtomicLong refusalEvents = new AtomicLong();
        CyclicBarrier warmDone = new CyclicBarrier(owners, () -> {
            for (int i = 0; i < owners; i++) {
                headsAtStart[i] = peers.sources.get(i).headSequence();
            }
            edges[0] = edge(peers, api, req, sampler, self);
        });
        long minNanos = TimeUnit.SECONDS.toNanos(settings.minSeconds());
        long cadence = TimeUnit.MILLISECONDS.toNanos(settings.cadenceMs());
        List<long[]> perOwner = Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.atomic.AtomicBoolean servedDone = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger servedFinished = new java.util.concurrent.atomic.AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(owners);
        try {
            List<Future<long[]>> loops = new ArrayList<>();
            for (int i = 0; i < owners; i++) {
                int owner = i;
                String inc = peers.incarnations.get(i);
                boolean isServed = served.contains(inc);
                loops.add(pool.submit(() -> {
                    long[] out = new long[measuredPerOwner * 64 + 16];
                    int n = 0;
                    boolean closedLoop = isServed;
                    long next = System.nanoTime();
                    for (int k = 0; ; k++) {
                        if (k == warmPerOwner) {
                            warmDone.await(settings.bootstrapSeconds(), TimeUnit.SECONDS);
                        }
                        boolean measuring = k >= warmPerOwner;
                        if (isServed && measuring && n >= measuredPerOwner && System.nanoTime() - edges[0].nanos() >= minNanos) {
                            if (servedFinished.incrementAndGet() == servedCount) {
                                servedDone.set(true);
                            }
                            break;
                        }
                        if (!isServed && measuring && servedDone.get()) {
                            break; // refused peers churn until every served owner finished
                        }
                        MutationResult.Recorded t = period(traces.get(owner), peers.sources.get(owner), c.updates(), next, cadence, c.repeatPercent());
                        if (closedLoop) {
                            long[] inst = awaitInstalled(c, sampler, inc, viewIds.get(inc), t.sequence(), refusal != null);
                            if (inst == null) {
                                refusalEvents.incrementAndGet(); // a served view refused during the window (beyond the envelope only)
                                closedLoop = false;
                            } else if (measuring && n < out.length) {
                                out[n++] = inst[1] - t.publishedMonoNanos();
                            }
                        }
                        next += cadence;
                        long wait = next - System.nanoTime();
                        if (wait > 0) {
                            LockSupport.parkNanos(wait); // the declared per-owner cadence, not a synchronization
                        } else {
                            next = System.nanoTime();
                        }
                    }
                    return Arrays.copyOf(out, n);
                }));
            }
            for (Future<long[]> f : loops) {
                perOwner.add(f.get(2, TimeUnit.HOURS));
            }
        } finally {
            pool.shutdownNow();
        }
        edges[1] = edge(peers, api, req, sampler, self);
        Edge a = edges[0];
        Edge b = edges[1];
        double secs = (b.nanos() - a.nanos()) / 1e9;
        long[] all = perOwner.stream().flatMapToLong(Arrays::stream).toArray();

        // Per-session figures from the sources' ledgers (served sessions only; a reconnect shows as a new session id).
        List<Double> bytes = new ArrayList<>();
        List<Double> frames = new ArrayList<>();
        long creditPeak = 0;
        int reconnects = 0;
        for (int i = 0; i < owners; i++) {
            if (!served.contains(peers.incarnations.get(i))) {
                continue;
            }
            double by = 0;
            double fr = 0;
            for (Map.Entry<UUID, SourceSessionStatus> e : b.sessions().get(i).entrySet()) {
                SourceSessionStatus after = e.getValue();
                SourceSessionStatus before = a.sessions().get(i).get(e.getKey());
                if (before == null) {
                    reconnects++;
                }
                by += sent(after) - (before == null ? 0 : sent(before));
                fr += after.lastFrame() - (before == null ? 0 : before.lastFrame());
                creditPeak = Math.max(creditPeak, after.peakOutstandingBytes());
            }
            bytes.add(by / secs);
            frames.add(fr / secs);
        }
        long journalPeak = peers.sources.stream().mapToLong(s -> s.status().journalPeakBytes()).max().orElse(0);
        double filterCpu = filterCpuSeconds(c, peers.sources, headsAtStart) / secs;
        Map<String, String> reqEncoded = Map.of("side", "requester", "measure", "encoded");
        double reqBytes = (PromText.sum(b.requesterMetrics(), "orbitkv_session_bytes", reqEncoded)
                - PromText.sum(a.requesterMetrics(), "orbitkv_session_bytes", reqEncoded)) / secs;
        Map<String, String> reqFrames = Map.of("side", "requester", "direction", "received");
        double reqFr = (PromText.sum(b.requesterMetrics(), "orbitkv_session_frames", reqFrames)
                - PromText.sum(a.requesterMetrics(), "orbitkv_session_frames", reqFrames)) / secs;
        long indexBytes = (long) PromText.sum(b.requesterMetrics(), "orbitkv_index_budget_bytes_used");
        long indexPeak = (long) PromText.sum(b.requesterMetrics(), "orbitkv_index_budget_bytes_peak");
        long rows = 0;
        for (String inc : served) {
            rows += sampler.row(inc).map(StatusSampler.Row::rows).orElse(0L);
        }
        List<ProcessFigures> procs = List.of(
                figures("requester Manager", a.requester(), b.requester(), idle0.requester(), idle1.requester()),
                figures("peers JVM (harness)", a.self(), b.self(), idle0.self(), idle1.self()),
                figures("etcd", a.etcdProcess(), b.etcdProcess(), idle0.etcdProcess(), idle1.etcdProcess()));
        return new Result(c, all, secs, (b.mutations() - a.mutations()) / secs, meanMax(bytes), meanMax(frames), reqBytes, reqFr, indexBytes,
                indexPeak, rows, creditPeak, journalPeak, filterCpu, procs, EtcdLoadHarness.rates(a.etcd(), b.etcd()),
                (b.polls() - a.polls()) / secs, (b.statusBytes() - a.statusBytes()) / secs, reconnects, refusal, refusalEvents.get());
    }

    private static long sent(SourceSessionStatus s) {
        return s.creditReturnedBytes() + s.outstandingBytes();
    }

    private static double[] meanMax(List<Double> v) {
        return new double[] {v.stream().mapToDouble(Double::doubleValue).average().orElse(0),
            v.stream().mapToDouble(Double::doubleValue).max().orElse(0)};
    }

    private static ProcessFigures figures(String name, ProcStat.ProcessSample a, ProcStat.ProcessSample b, ProcStat.ProcessSample i0,
            ProcStat.ProcessSample i1) {
        return new ProcessFigures(name, b.coreSecondsSince(a), b.coresBusySince(a), b.rssBytes(), b.rssPeakBytes(), i1.coresBusySince(i0));
    }

    /** One owner period: {@code burst} mutations, back to back or spread evenly; returns the terminal record. */
    private MutationResult.Recorded period(EtcdLoadHarness.Trace trace, InventorySource source, Updates updates, long start, long cadence,
            int repeatPercent) {
        int n = settings.burst();
        for (int i = 0; i < n - 1; i++) {
            if (updates == Updates.CONSTANT) {
                parkUntil(start + cadence * i / n);
            }
            trace.step(source, repeatPercent, settings.deletePercent());
        }
        if (updates == Updates.CONSTANT) {
            parkUntil(start + cadence * (n - 1) / n);
        }
        return trace.terminal(source);
    }

    private static void parkUntil(long t) {
        for (long w = t - System.nanoTime(); w > 0; w = t - System.nanoTime()) {
            LockSupport.parkNanos(w); // the constant update pattern's spacing, not a synchronization (may return early)
        }
    }

    /**
     * Waits for the exact install of {@code terminal} in the view the window started with. Returns {sequence,
     * monoNs}; a superseded sequence or a replaced view fails collection. Beyond the envelope a served view that is
     * withdrawn or repaired during the window returns null (a refusal event, reported), within it fails collection.
     */
    private long[] awaitInstalled(Cell c, StatusSampler sampler, String inc, String viewId, long terminal, boolean beyond) {
        StatusSampler.Row r = sampler.await(inc, row -> row.installedSequence() >= terminal
                || (beyond && !"INSTALLED".equals(row.state())), Duration.ofSeconds(60), c.label() + " " + inc + " installs " + terminal);
        if (r.installedSequence() < terminal) {
            return null;
        }
        if (r.installedSequence() != terminal) {
            throw new VisibilityHarness.CollectionFailed(c.label() + " " + inc + ": installed " + r.installedSequence() + " past terminal "
                    + terminal + " (a superseded sample fails collection)");
        }
        if (!viewId.equals(r.viewId())) {
            if (beyond) {
                return null;
            }
            throw new VisibilityHarness.CollectionFailed(c.label() + " " + inc + ": view " + r.viewId() + " replaced " + viewId
                    + " (a replacement-view sample fails collection)");
        }
        return new long[] {r.installedSequence(), r.installedMonoNs()};
    }

    /**
     * Source filtering CPU: {@code InventorySource#read} of each owner's window (from its head at the window's start to
     * its head now), under the cell's scope, one period's sequences per read as the live sessions read them, on this
     * thread; its CPU time in seconds (what a scoped stream spends to save bytes, design <em>Resource bounds</em>).
     */
    private double filterCpuSeconds(Cell c, List<InventorySource> sources, long[] from) {
        Scope scope = c.scoped() ? Scope.of(List.of(namespaces(1).getFirst())) : Scope.all();
        long cpu0 = THREADS.getCurrentThreadCpuTime();
        long records = 0;
        for (int i = 0; i < sources.size(); i++) {
            InventorySource s = sources.get(i);
            long head = s.headSequence();
            long cursor = from[i];
            while (cursor < head) {
                ReadOutcome o = s.read(cursor, Math.min(head, cursor + settings.burst()), scope, 1);
                if (!(o instanceof ReadOutcome.Intervals iv) || iv.intervals().isEmpty()) {
                    throw new IllegalStateException("filter replay of owner " + i + " at " + cursor + ": " + o);
                }
                for (CoalescedInterval ci : iv.intervals()) {
                    records += ci.records().size();
                }
                cursor = iv.endCursor(cursor);
            }
        }
        if (records < 0) {
            throw new IllegalStateException("unreachable");
        }
        return (THREADS.getCurrentThreadCpuTime() - cpu0) / 1e9;
    }

    // ------------------------------------------------------------------ report

    private static String line(Result r) {
        Stats v = r.stats();
        ProcessFigures q = r.process("requester Manager");
        return String.format("visibility n=%d p50 %.3f p99 %.3f max %.3f ms; %,.0f mutations/s; per session %,.0f B/s (max %,.0f), %.1f frames/s; "
                + "requester rx %,.0f B/s %,.1f frames/s; index %,d B (peak %,d) %,d rows %.1f B/row; credit peak %,d B; journal peak %,d B; "
                + "filter cpu %.3f cores; requester %.3f cores (idle %.3f) rss %,d MiB; peers JVM %.3f cores; etcd %.3f cores, %.2f msgs/s; "
                + "polls %.0f/s; reconnects %d%s", v.n(), v.p50Ms(), v.p99Ms(), v.maxMs(), r.mutationsPerS(), r.sessionBytesPerS()[0],
                r.sessionBytesPerS()[1], r.sessionFramesPerS()[0], r.requesterBytesPerS(), r.requesterFramesPerS(), r.indexBytes(), r.indexPeakBytes(),
                r.indexRows(), r.bytesPerRow(), r.creditPeakBytes(), r.journalPeakBytes(), r.filterCpuCoresBusy(), q.coresBusy(), q.idleCoresBusy(),
                q.rssBytes() >> 20, r.process("peers JVM (harness)").coresBusy(), r.process("etcd").coresBusy(), r.etcd().messagesPerS(),
                r.pollsPerS(), r.sessionReconnects(), r.refusal() == null ? "" : "; REFUSAL: " + r.refusal().detail()
                        + (r.refusalEventsDuringWindow() > 0 ? " (+" + r.refusalEventsDuringWindow() + " served views refused during the window)" : ""));
    }

    private void report(List<Result> results) {
        run.report("| cell | served / admitted | samples | visibility p50 ms | p99 ms | mutations/s | per-session B/s (mean / max) | per-session frames/s "
                + "| requester rx B/s | index MiB (peak) | B/row | credit peak KiB | journal peak MiB | filter CPU cores | requester cores (idle) | "
                + "requester RSS MiB (peak) | peers JVM cores | peers JVM RSS MiB | etcd cores | etcd msgs/s | refusal |");
        run.report("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for (Result r : results) {
            Stats v = r.stats();
            ProcessFigures q = r.process("requester Manager");
            ProcessFigures p = r.process("peers JVM (harness)");
            int served = r.refusal() == null ? r.cell().peers() : r.refusal().served();
            run.report(String.format("| %s | %d / %d | %,d | %.3f | %.3f | %,.0f | %,.0f / %,.0f | %.1f | %,.0f | %.1f (%.1f) | %.1f | %,.0f | %.1f | %.3f | %.3f (%.3f) "
                    + "| %,d (%,d) | %.3f | %,d | %.3f | %.2f | %s |", r.cell().label(), served, r.cell().peers(), v.n(), v.p50Ms(), v.p99Ms(),
                    r.mutationsPerS(), r.sessionBytesPerS()[0], r.sessionBytesPerS()[1], r.sessionFramesPerS()[0], r.requesterBytesPerS(),
                    r.indexBytes() / 1048576.0, r.indexPeakBytes() / 1048576.0, r.bytesPerRow(), r.creditPeakBytes() / 1024.0,
                    r.journalPeakBytes() / 1048576.0, r.filterCpuCoresBusy(), q.coresBusy(), q.idleCoresBusy(), q.rssBytes() >> 20,
                    q.rssPeakBytes() >> 20, p.coresBusy(), p.rssBytes() >> 20, r.process("etcd").coresBusy(), r.etcd().messagesPerS(),
                    r.refusal() == null ? "—" : r.refusal().detail()));
        }
        for (Result r : results) {
            run.report("  etcd messages/s by method, " + r.cell().label() + ": " + r.etcd().messagesByMethodPerS());
        }
        plots(results);
        run.report("  raw samples: " + run.dir());
    }

    private void plots(List<Result> results) {
        Result base = results.stream().filter(r -> r.cell().dimension().equals("base")).findFirst().orElse(null);
        curve(results, base, "peers", "scaling-peers.png", "peers (metadata-only, one requester Manager)", r -> r.cell().peers(), true);
        curve(results, base, "residences", "scaling-residences.png", "residences per owner", r -> r.cell().residences(), true);
        curve(results, base, "churn", "scaling-churn.png", "repeated-key churn (%)", r -> r.cell().repeatPercent(), false);
        // All-domain vs scoped per namespace count: bytes on the wire and filtering CPU, two figures (different units).
        Map<String, Double> bytesAll = new LinkedHashMap<>();
        Map<String, Double> bytesScoped = new LinkedHashMap<>();
        Map<String, Double> filterAll = new LinkedHashMap<>();
        Map<String, Double> filterScoped = new LinkedHashMap<>();
        Map<String, Double> peersAll = new LinkedHashMap<>();
        Map<String, Double> peersScoped = new LinkedHashMap<>();
        for (int n : new int[] {1, 4, 16}) {
            for (Result r : results) {
                if (!(r.cell().dimension().equals("namespaces") || r == base) || r.cell().namespaces() != n) {
                    continue;
                }
                String k = n + (n == 1 ? " namespace" : " namespaces");
                (r.cell().scoped() ? bytesScoped : bytesAll).put(k, r.sessionBytesPerS()[0] / 1024.0);
                (r.cell().scoped() ? filterScoped : filterAll).put(k, r.filterCpuCoresBusy() * 1000);
                (r.cell().scoped() ? peersScoped : peersAll).put(k, r.process("peers JVM (harness)").coresBusy() * 1000);
            }
        }
        if (!bytesScoped.isEmpty() && !bytesAll.isEmpty()) {
            Map<String, Map<String, Double>> b = new LinkedHashMap<>();
            b.put("all-domain", bytesAll);
            b.put("scoped (namespace 0 only)", bytesScoped);
            Plots.bars(run, "scaling-namespaces-bytes.png", "All-domain vs scoped: bytes on the wire per session (16 peers)", "KiB/s per session", b);
            Map<String, Map<String, Double>> cpu = new LinkedHashMap<>();
            cpu.put("source filter CPU, all-domain", filterAll);
            cpu.put("source filter CPU, scoped", filterScoped);
            cpu.put("peers JVM CPU, all-domain", peersAll);
            cpu.put("peers JVM CPU, scoped", peersScoped);
            Plots.bars(run, "scaling-namespaces-cpu.png", "All-domain vs scoped: source-side CPU (16 peers)", "millicores", cpu);
        }
        Map<String, Map<String, Double>> up = new LinkedHashMap<>();
        Map<String, Double> p50 = new LinkedHashMap<>();
        Map<String, Double> p99 = new LinkedHashMap<>();
        for (Result r : results) {
            if (r.cell().dimension().equals("updates") || r == base) {
                String k = r.cell().updates() == Updates.BURSTY ? "bursty (base)" : "constant";
                p50.put(k, r.stats().p50Ms());
                p99.put(k, r.stats().p99Ms());
            }
        }
        if (p50.size() > 1) {
            up.put("visibility p50 (ms)", p50);
            up.put("visibility p99 (ms)", p99);
            Plots.bars(run, "scaling-updates.png", "Constant vs bursty updates (16 peers)", "ms", up);
        }
    }

    private void curve(List<Result> results, Result base, String dim, String file, String xLabel, java.util.function.ToDoubleFunction<Result> x,
            boolean logX) {
        List<Result> pts = new ArrayList<>();
        for (Result r : results) {
            if (r.cell().dimension().equals(dim) || r == base) {
                pts.add(r);
            }
        }
        if (pts.size() < 2) {
            return;
        }
        pts.sort((p, q) -> Double.compare(x.applyAsDouble(p), x.applyAsDouble(q)));
        Map<String, double[][]> series = new LinkedHashMap<>();
        series.put("visibility p50 (ms)", xy(pts, x, r -> r.stats().p50Ms()));
        series.put("visibility p99 (ms)", xy(pts, x, r -> r.stats().p99Ms()));
        series.put("requester CPU (cores x 100)", xy(pts, x, r -> r.process("requester Manager").coresBusy() * 100));
        series.put("per-session KiB/s", xy(pts, x, r -> r.sessionBytesPerS()[0] / 1024.0));
        series.put("index MiB", xy(pts, x, r -> r.indexBytes() / 1048576.0));
        Plots.curves(run, file, "Scaling one dimension at a time: " + xLabel, xLabel, "value (log scale)", series, logX);
    }

    private static double[][] xy(List<Result> pts, java.util.function.ToDoubleFunction<Result> x, java.util.function.ToDoubleFunction<Result> y) {
        double[][] out = new double[pts.size()][];
        for (int i = 0; i < pts.size(); i++) {
            out[i] = new double[] {x.applyAsDouble(pts.get(i)), y.applyAsDouble(pts.get(i))};
        }
        return out;
    }
}
