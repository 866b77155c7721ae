package orbitkv.conformance.perf;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerApi;
import orbitkv.conformance.manager.ManagerProcess;
import orbitkv.conformance.peer.FaultProxy;
import orbitkv.conformance.peer.LinkFaults;
import orbitkv.membership.Endpoint;
import orbitkv.membership.MembershipAdmin;
import orbitkv.testing.Await;

/**
 * Issue 14's route-selection benchmarks on real Manager processes (PERF-5, PERF-6, ROUTE-6):
 *
 * <ol>
 *   <li><b>Ablation.</b> Two sources hold the demanded prefixes: {@code a}, whose data listener is reached only
 *       through a {@link FaultProxy} with a bandwidth cap (the slowed peer), and {@code b} (unslowed). The proxy paces
 *       each direction of the link as a whole, shared by all its data connections (until 2026-11-30 it paced each
 *       connection separately, so a READ spread over several connections saw the cap once per connection). One seeded
 *       demand trace mixes prefixes only {@code a} holds, prefixes only {@code b} holds and contested prefixes both
 *       hold. The fixed policy serves a contested prefix from {@code a} (equal span, equal medium: the owner order
 *       decides); the cost-driven policy may move it to {@code b} once both classes have
 *       {@code --route-observations-min} executed successes and the gain exceeds the uncertainty plus the
 *       hysteresis. Each independent run is a fresh requester process (an empty cost model) started with
 *       {@code --route-selection fixed|shadow|cost-driven} that replays the identical trace over TCP; runs are
 *       grouped in blocks of one run per mode, in rotated order. Every restore must be byte-exact and complete
 *       (collection fails otherwise). Per run: restore-time p50 and p99 over the whole trace and over the contested
 *       demands; per mode the median over runs and, against fixed, the per-block ratio's geometric mean with a
 *       seeded 10,000-resample bootstrap 95 % interval that resamples blocks (runs, never requests). A policy
 *       "wins" a metric only when the interval's upper end is below 1; otherwise the report says it does not.</li>
 *   <li><b>Local-restore overhead.</b> Three Managers, one per mode, each holding the same local blocks; rounds of
 *       one HTTP local restore per Manager in rotated order. Per mode p50/p99; shadow and cost-driven against fixed
 *       as batch ratios of p50 with the same bootstrap over batches. Since the wiring every restore goes through the
 *       planner, so fixed (the fixed policy, no search) is the baseline: the figure is what shadow evaluation or a
 *       cost-driven search adds to the fixed plan end to end.</li>
 * </ol>
 *
 * Raw samples, the report and nothing else go under {@link BenchRun#dir()} (outside the checkout).
 */
public final class RouteAblationHarness {
    static final String NS = "routes";
    static final int RESAMPLES = 10_000;
    /** Independent runs per mode below which no comparison is judged (PERF-6). */
    public static final int RUNS_JUDGED_MIN = 5;

    /** The three selection modes, with their {@code --route-selection} value. */
    public enum Mode {
        FIXED("fixed"), SHADOW("shadow"), COST_DRIVEN("cost-driven");

        final String option;

        Mode(String option) {
            this.option = option;
        }
    }

    /** Who holds a demanded prefix. */
    public enum Kind { SLOW_ONLY, FAST_ONLY, CONTESTED }

    /** Which demands of a run a figure is taken over. */
    public enum Slice {
        ALL("all"), CONTESTED("contested"),
        /** Contested demands from the trace's learning point on ({@link Settings#learnedFrom()}): where a switch is possible. */
        CONTESTED_LEARNED("contested after learning"), SLOW_ONLY("slow-only"), FAST_ONLY("fast-only");

        final String label;

        Slice(String label) {
            this.label = label;
        }

        boolean holds(Kind k, int index, int learnedFrom) {
            return switch (this) {
                case ALL -> true;
                case CONTESTED -> k == Kind.CONTESTED;
                case CONTESTED_LEARNED -> k == Kind.CONTESTED && index >= learnedFrom;
                case SLOW_ONLY -> k == Kind.SLOW_ONLY;
                case FAST_ONLY -> k == Kind.FAST_ONLY;
            };
        }
    }

    /**
     * @param runs independent runs per mode (≥ 5 for a reported comparison; the smoke uses fewer)
     * @param requests demands per trace
     * @param keysPerDemand keys per demanded prefix
     * @param blockBytes payload bytes per block
     * @param prefixesPerKind distinct prefixes of each {@link Kind}
     * @param slowBytesPerSecond the slowed peer's bandwidth cap per direction
     * @param observationsMin the requester's {@code --route-observations-min}
     * @param overheadRounds measured rounds of the local-restore overhead (0: skip it)
     * @param overheadWarmup warm-up rounds before them
     * @param overheadBatches batches the measured rounds are cut into for the bootstrap
     * @param seed the trace's and the bootstrap's seed
     */
    public record Settings(int runs, int requests, int keysPerDemand, int blockBytes, int prefixesPerKind,
                           long slowBytesPerSecond, int observationsMin, int overheadRounds, int overheadWarmup,
                           int overheadBatches, long seed) {
        public Settings {
            if (runs < 1 || requests < 1 || keysPerDemand < 1 || keysPerDemand > 128 || blockBytes < 64 || prefixesPerKind < 1
                    || slowBytesPerSecond < 1 || observationsMin < 1 || overheadRounds < 0 || overheadWarmup < 0 || overheadBatches < 1) {
                throw new IllegalArgumentException("bad route ablation settings: " + this);
            }
            if (overheadRounds > 0 && overheadRounds < overheadBatches) {
                throw new IllegalArgumentException("overheadRounds " + overheadRounds + " < overheadBatches " + overheadBatches);
            }
        }

        /** {@code bench.routes.NAME} system properties over the formal defaults. */
        public static Settings fromProperties() {
            return new Settings(Integer.getInteger("bench.routes.runs", 5), Integer.getInteger("bench.routes.requests", 200),
                    Integer.getInteger("bench.routes.keysPerDemand", 4), Integer.getInteger("bench.routes.blockBytes", 64 << 10),
                    Integer.getInteger("bench.routes.prefixesPerKind", 8), Long.getLong("bench.routes.slowBytesPerSecond", 2L << 20),
                    Integer.getInteger("bench.routes.observationsMin", 32), Integer.getInteger("bench.routes.overheadRounds", 2_000),
                    Integer.getInteger("bench.routes.overheadWarmup", 500), Integer.getInteger("bench.routes.overheadBatches", 10),
                    Long.getLong("bench.routes.seed", 20261130L));
        }

        /**
         * The first trace index before which both peers' classes can have {@code observationsMin} executed successes
         * (that many fast-only demands, and that many slow-only or contested ones): no switch can happen earlier, in
         * any mode. A function of the trace alone, so identical for every run.
         */
        public int learnedFrom() {
            List<Request> t = trace();
            int fast = 0;
            int slow = 0;
            for (int i = 0; i < t.size(); i++) {
                if (fast >= observationsMin && slow >= observationsMin) {
                    return i;
                }
                if (t.get(i).kind() == Kind.FAST_ONLY) {
                    fast++;
                } else {
                    slow++;
                }
            }
            return t.size();
        }

        /** The demand trace every run replays (seeded): 25 % slow-only, 35 % fast-only, 40 % contested. */
        public List<Request> trace() {
            SplittableRandom r = new SplittableRandom(seed);
            List<Request> out = new ArrayList<>(requests);
            for (int i = 0; i < requests; i++) {
                int x = r.nextInt(100);
                Kind k = x < 25 ? Kind.SLOW_ONLY : x < 60 ? Kind.FAST_ONLY : Kind.CONTESTED;
                out.add(new Request(k, r.nextInt(prefixesPerKind)));
            }
            return out;
        }
    }

    /** One demand of the trace: a prefix of one kind. */
    public record Request(Kind kind, int prefix) {}

    /**
     * One independent run of one mode.
     *
     * @param nanos restore time per request (harness clock, send to full body), trace order
     * @param switchesExecuted restores whose trace says {@code switch:executed}
     * @param shadowSwitches restores whose trace says {@code switch} without {@code executed}
     * @param slowRoutes contested restores with a route served by the slowed peer
     * @param decisions how many restores had each planner decision ({@code sel=} of the trace header)
     */
    public record RunResult(Mode mode, int block, long[] nanos, Kind[] kinds, int switchesExecuted, int shadowSwitches,
                            int slowRoutes, int contested, Map<String, Integer> decisions, int learnedFrom, String failure) {
        long[] of(Slice slice) {
            return java.util.stream.IntStream.range(0, nanos.length).filter(i -> slice.holds(kinds[i], i, learnedFrom))
                    .mapToLong(i -> nanos[i]).toArray();
        }
    }

    /** A mode's metric against fixed: per-block ratios, their geometric mean and bootstrap 95 % interval. */
    public record Comparison(Mode mode, String metric, double[] ratios, double geometricMean, double lower, double upper) {
        /** Enough independent runs for a verdict. */
        public boolean judged() {
            return ratios.length >= RUNS_JUDGED_MIN;
        }

        /** Faster than fixed beyond the uncertainty. */
        public boolean wins() {
            return judged() && upper < 1;
        }

        /** Slower than fixed beyond the uncertainty. */
        public boolean loses() {
            return judged() && lower > 1;
        }

        String verdict() {
            return !judged() ? "NOT JUDGED (" + ratios.length + " < " + RUNS_JUDGED_MIN + " runs)" : wins() ? "WINS (interval below 1)" : loses() ? "LOSES (interval above 1)" : "DOES NOT WIN (interval contains 1)";
        }
    }

    public record AblationResult(List<RunResult> runs, List<Comparison> comparisons) {}

    public record OverheadResult(Map<Mode, long[]> nanos, List<Comparison> comparisons) {}

    private final Settings settings;
    private final BenchRun run;
    private final EtcdFixture etcd;
    private final Path work;

    public RouteAblationHarness(Settings settings, BenchRun run, EtcdFixture etcd, Path work) {
        this.settings = settings;
        this.run = run;
        this.etcd = etcd;
        this.work = work;
    }

    // ------------------------------------------------------------------ the ablation

    public AblationResult ablation() throws Exception {
        String cluster = "routes-" + UUID.randomUUID().toString().substring(0, 8);
        format(cluster);
        run.report("# route ablation: " + settings);
        run.report(String.format(Locale.ROOT, "host: %d cores, java %s; slowed peer a: data link capped at %,d B/s per direction, shared by its connections",
                Runtime.getRuntime().availableProcessors(), Runtime.version(), settings.slowBytesPerSecond()));
        List<Request> trace = settings.trace();
        run.report("trace: " + trace.size() + " demands (" + count(trace, Kind.SLOW_ONLY) + " slow-only, " + count(trace, Kind.FAST_ONLY)
                + " fast-only, " + count(trace, Kind.CONTESTED) + " contested), " + settings.keysPerDemand() + " keys x "
                + settings.blockBytes() + " B per demand; learning point (both classes can hold " + settings.observationsMin()
                + " successes): demand " + settings.learnedFrom() + ", after it " + trace.subList(settings.learnedFrom(), trace.size())
                .stream().filter(q -> q.kind() == Kind.CONTESTED).count() + " contested demands");
        int dataPort = freePort();
        List<ManagerProcess> started = new ArrayList<>();
        try (FaultProxy slowLink = new FaultProxy(new Endpoint("127.0.0.1", dataPort))) {
            slowLink.faults(LinkFaults.NONE.withBandwidth(settings.slowBytesPerSecond()));
            ManagerProcess a = start(started, cluster, "a", List.of("--transfer-data-port", Integer.toString(dataPort),
                    "--transfer-data-advertise", slowLink.endpoint().host() + ":" + slowLink.endpoint().port()));
            ManagerProcess b = start(started, cluster, "b", List.of());
            Map<String, byte[]> expected = new LinkedHashMap<>();
            for (Kind k : Kind.values()) {
                for (int p = 0; p < settings.prefixesPerKind(); p++) {
                    Map<String, byte[]> blocks = prefixBlocks(k, p);
                    expected.putAll(blocks);
                    if (k != Kind.FAST_ONLY) {
                        save(a, blocks);
                    }
                    if (k != Kind.SLOW_ONLY) {
                        save(b, blocks);
                    }
                }
            }
            List<RunResult> results = new ArrayList<>();
            int ordinal = 0;
            for (int block = 0; block < settings.runs(); block++) {
                for (int j = 0; j < Mode.values().length; j++) {
                    Mode mode = Mode.values()[(block + j) % Mode.values().length];
                    RunResult r = oneRun(cluster, mode, block, ordinal++, trace, expected, a, b);
                    results.add(r);
                    report(r);
                    if (r.failure() != null) {
                        return new AblationResult(results, List.of());
                    }
                }
            }
            List<String> rows = new ArrayList<>();
            for (RunResult r : results) {
                for (int i = 0; i < r.nanos().length; i++) {
                    rows.add(r.mode().option + "," + r.block() + "," + i + "," + r.kinds()[i] + "," + r.nanos()[i]);
                }
            }
            run.csv("route-ablation-samples.csv", "mode,block,request,kind,nanos", rows);
            List<Comparison> comparisons = new ArrayList<>();
            run.report("");
            run.report("| mode | runs | p50 all ms (median of runs; min..max) | p99 all ms | p50 contested ms | p99 contested ms "
                    + "| p50 contested after learning ms | p99 contested after learning ms | p50 slow-only ms | p50 fast-only ms "
                    + "| switches executed / shadow (per run) |");
            run.report("|---|---|---|---|---|---|---|---|---|---|---|");
            for (Mode m : Mode.values()) {
                List<RunResult> rs = results.stream().filter(r -> r.mode() == m).toList();
                run.report(String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s |", m.option, rs.size(),
                        spread(rs, Slice.ALL, 0.50), spread(rs, Slice.ALL, 0.99), spread(rs, Slice.CONTESTED, 0.50),
                        spread(rs, Slice.CONTESTED, 0.99), spread(rs, Slice.CONTESTED_LEARNED, 0.50),
                        spread(rs, Slice.CONTESTED_LEARNED, 0.99), spread(rs, Slice.SLOW_ONLY, 0.50), spread(rs, Slice.FAST_ONLY, 0.50),
                        rs.stream().map(r -> Integer.toString(r.switchesExecuted())).toList(),
                        rs.stream().map(r -> Integer.toString(r.shadowSwitches())).toList()));
            }
            run.report("");
            for (Mode m : List.of(Mode.SHADOW, Mode.COST_DRIVEN)) {
                for (Slice slice : List.of(Slice.ALL, Slice.CONTESTED, Slice.CONTESTED_LEARNED)) {
                    if (results.getFirst().of(slice).length == 0) {
                        run.report("no " + slice.label + " demands in this trace: no comparison");
                        continue;
                    }
                    for (double q : new double[] {0.50, 0.99}) {
                        String metric = (q == 0.50 ? "p50 " : "p99 ") + slice.label;
                        double[] ratios = new double[settings.runs()];
                        for (int block = 0; block < settings.runs(); block++) {
                            ratios[block] = (double) quantile(find(results, m, block).of(slice), q)
                                    / quantile(find(results, Mode.FIXED, block).of(slice), q);
                        }
                        Comparison c = compare(m, metric, ratios);
                        comparisons.add(c);
                        report(c);
                    }
                }
            }
            return new AblationResult(results, comparisons);
        } finally {
            started.forEach(ManagerProcess::close);
        }
    }

    private RunResult oneRun(String cluster, Mode mode, int block, int ordinal, List<Request> trace, Map<String, byte[]> expected,
                             ManagerProcess a, ManagerProcess b) throws Exception {
        List<ManagerProcess> started = new ArrayList<>();
        long[] nanos = new long[trace.size()];
        Kind[] kinds = new Kind[trace.size()];
        int executed = 0;
        int shadow = 0;
        int slow = 0;
        int contested = 0;
        Map<String, Integer> decisions = new java.util.TreeMap<>();
        try {
            ManagerProcess c = start(started, cluster, String.format(Locale.ROOT, "req-%02d-%s", ordinal, mode.option),
                    List.of("--route-selection", mode.option, "--route-observations-min", Integer.toString(settings.observationsMin())));
            published(c, a, b);
            ManagerApi api = new ManagerApi(c.httpBase(), Duration.ofSeconds(30));
            for (int i = 0; i < trace.size(); i++) {
                Request q = trace.get(i);
                List<String> keys = keys(q.kind(), q.prefix());
                long t0 = System.nanoTime();
                ManagerApi.Reply r = api.restore(NS, keys, "tcp", 10_000);
                nanos[i] = System.nanoTime() - t0;
                kinds[i] = q.kind();
                String fail = check(r, keys, expected);
                if (fail != null) {
                    return new RunResult(mode, block, nanos, kinds, executed, shadow, slow, contested, decisions, settings.learnedFrom(), "request " + i + ": " + fail);
                }
                String t = String.valueOf(r.header("X-OrbitKV-Route-Trace"));
                String d = decision(t);
                decisions.merge(d, 1, Integer::sum);
                if (d.equals("switch:executed")) {
                    executed++;
                } else if (d.equals("switch")) {
                    shadow++;
                }
                if (q.kind() == Kind.CONTESTED) {
                    contested++;
                    if (t.contains("@a/")) {
                        slow++;
                    }
                }
            }
            return new RunResult(mode, block, nanos, kinds, executed, shadow, slow, contested, decisions, settings.learnedFrom(), null);
        } finally {
            for (ManagerProcess m : started) {
                m.sigterm();
                m.awaitExit(Duration.ofSeconds(15));
                m.close();
            }
        }
    }

    private static String check(ManagerApi.Reply r, List<String> keys, Map<String, byte[]> expected) {
        if (r.status() != 200) {
            return "status " + r.status() + ": " + r.text();
        }
        if (!String.valueOf(keys.size()).equals(r.header("X-OrbitKV-Restored"))) {
            return "restored " + r.header("X-OrbitKV-Restored") + " of " + keys.size() + " (" + r.header("X-OrbitKV-Route-Trace") + ")";
        }
        Map<String, byte[]> back = ManagerApi.unframe(r.body());
        if (!back.keySet().equals(new java.util.LinkedHashSet<>(keys))) {
            return "restored keys differ";
        }
        for (String k : keys) {
            if (!Arrays.equals(back.get(k), expected.get(k))) {
                return "bytes of " + k + " differ";
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ the local-restore overhead

    public OverheadResult overhead() throws Exception {
        String cluster = "routes-oh-" + UUID.randomUUID().toString().substring(0, 8);
        format(cluster);
        run.report("");
        run.report(String.format(Locale.ROOT, "# local-restore overhead: %d warm-up + %d measured rounds, one HTTP local restore of %d x %d B per mode per round, rotated order",
                settings.overheadWarmup(), settings.overheadRounds(), settings.keysPerDemand(), settings.blockBytes()));
        List<ManagerProcess> started = new ArrayList<>();
        try {
            Map<Mode, ManagerApi> apis = new EnumMap<>(Mode.class);
            Map<String, byte[]> blocks = prefixBlocks(Kind.SLOW_ONLY, 0);
            List<String> keys = List.copyOf(blocks.keySet());
            for (Mode m : Mode.values()) {
                ManagerProcess p = start(started, cluster, "local-" + m.option, List.of("--route-selection", m.option,
                        "--route-observations-min", Integer.toString(settings.observationsMin())));
                save(p, blocks);
                apis.put(m, new ManagerApi(p.httpBase(), Duration.ofSeconds(30)));
            }
            int total = settings.overheadWarmup() + settings.overheadRounds();
            Map<Mode, long[]> nanos = new EnumMap<>(Mode.class);
            for (Mode m : Mode.values()) {
                nanos.put(m, new long[settings.overheadRounds()]);
            }
            for (int round = 0; round < total; round++) {
                for (int j = 0; j < Mode.values().length; j++) {
                    Mode m = Mode.values()[(round + j) % Mode.values().length];
                    long t0 = System.nanoTime();
                    ManagerApi.Reply r = apis.get(m).restore(NS, keys, "tcp", 10_000);
                    long dt = System.nanoTime() - t0;
                    String fail = check(r, keys, blocks);
                    if (fail != null) {
                        throw new IllegalStateException(m.option + " round " + round + ": " + fail);
                    }
                    String t = String.valueOf(r.header("X-OrbitKV-Route-Trace"));
                    if (!t.contains("local-dram")) {
                        throw new IllegalStateException(m.option + " round " + round + " was not a local DRAM restore: " + t);
                    }
                    if (round >= settings.overheadWarmup()) {
                        nanos.get(m)[round - settings.overheadWarmup()] = dt;
                    }
                }
            }
            List<String> rows = new ArrayList<>();
            for (int i = 0; i < settings.overheadRounds(); i++) {
                for (Mode m : Mode.values()) {
                    rows.add(m.option + "," + i + "," + nanos.get(m)[i]);
                }
            }
            run.csv("route-overhead-samples.csv", "mode,round,nanos", rows);
            run.report("| mode | restores | p50 ms | p99 ms | max ms |");
            run.report("|---|---|---|---|---|");
            for (Mode m : Mode.values()) {
                run.report("| " + m.option + " | " + Stats.of(nanos.get(m)).row() + " |");
            }
            List<Comparison> comparisons = new ArrayList<>();
            int per = settings.overheadRounds() / settings.overheadBatches();
            for (Mode m : List.of(Mode.SHADOW, Mode.COST_DRIVEN)) {
                for (double q : new double[] {0.50, 0.99}) {
                    double[] ratios = new double[settings.overheadBatches()];
                    for (int bt = 0; bt < ratios.length; bt++) {
                        ratios[bt] = (double) quantile(Arrays.copyOfRange(nanos.get(m), bt * per, (bt + 1) * per), q)
                                / quantile(Arrays.copyOfRange(nanos.get(Mode.FIXED), bt * per, (bt + 1) * per), q);
                    }
                    Comparison c = compare(m, (q == 0.50 ? "p50" : "p99") + " local restore", ratios);
                    comparisons.add(c);
                    run.report(String.format(Locale.ROOT, "%s / fixed, %s: geometric mean of %d batch ratios %.3f, 95%% interval [%.3f, %.3f] -> overhead %+.1f %% (goal <= 5 %%: %s)",
                            m.option, c.metric(), ratios.length, c.geometricMean(), c.lower(), c.upper(), (c.geometricMean() - 1) * 100,
                            c.upper() <= 1.05 ? "met" : c.lower() > 1.05 ? "NOT MET (interval above 1.05)" : "not shown (interval contains 1.05)"));
                }
            }
            return new OverheadResult(nanos, comparisons);
        } finally {
            for (ManagerProcess m : started) {
                m.close();
            }
        }
    }

    // ------------------------------------------------------------------ shared pieces

    private void format(String cluster) throws Exception {
        try (MembershipAdmin admin = MembershipAdmin.connect(etcd.endpoints(), cluster, 5_000)) {
            if (!(admin.format() instanceof MembershipAdmin.Formatted)) {
                throw new IllegalStateException("cluster " + cluster + " not formatted");
            }
        }
    }

    private ManagerProcess start(List<ManagerProcess> started, String cluster, String node, List<String> extra) throws IOException {
        Path dir = Files.createDirectories(work.resolve(node));
        List<String> args = new ArrayList<>(List.of("manager", "--cluster", cluster, "--node-id", node,
                "--etcd", etcd.endpoints().toString(), "--http-listen", "127.0.0.1:0", "--peer-listen", "127.0.0.1:0",
                "--dram", "128MiB", "--block-bytes-max", "1MiB", "--dram-dir", Files.createDirectories(dir.resolve("dram")).toString(),
                "--lease-ttl-ms", "4000", "--fence-safety-margin-ms", "1000", "--renewal-interval-ms", "500",
                "--etcd-call-timeout-ms", "1000", "--shutdown-drain-ms", "2000", "--idle-liveness-ms", "500"));
        args.addAll(extra);
        ManagerProcess m = ManagerProcess.launchAsImage(node, run.dir().resolve("logs"), args);
        started.add(m);
        m.awaitReady();
        return m;
    }

    private static void save(ManagerProcess m, Map<String, byte[]> blocks) {
        ManagerApi.Reply r = new ManagerApi(m.httpBase()).save(NS, blocks);
        if (r.status() != 200) {
            throw new IllegalStateException(m + " save answered " + r.status() + ": " + r.text());
        }
    }

    /** {@code requester}'s index holds everything the sources published (sync at each source, await its fence). */
    private static void published(ManagerProcess requester, ManagerProcess... sources) {
        ManagerApi req = new ManagerApi(requester.httpBase());
        for (ManagerProcess s : sources) {
            Await.until(requester + " admits " + s, Duration.ofSeconds(30),
                    () -> req.status().at("/membership/members").asInt() >= 3);
            ManagerApi.Reply sync = new ManagerApi(s.httpBase()).sync();
            if (sync.status() != 200) {
                throw new IllegalStateException(s + " sync answered " + sync.status() + ": " + sync.text());
            }
            JsonNode fence = sync.json().get("inventory_fence");
            ManagerApi.Reply await = req.await(fence, req.status().at("/scope/digest").asText(), 20_000);
            if (await.status() != 200) {
                throw new IllegalStateException(requester + " await answered " + await.status() + ": " + await.text());
            }
        }
    }

    List<String> keys(Kind k, int prefix) {
        List<String> out = new ArrayList<>(settings.keysPerDemand());
        for (int j = 0; j < settings.keysPerDemand(); j++) {
            out.add(String.format("%064x", 0xc0000000L + k.ordinal() * 1_000_000L + prefix * 1_000L + j));
        }
        return out;
    }

    private Map<String, byte[]> prefixBlocks(Kind k, int prefix) {
        Map<String, byte[]> out = new LinkedHashMap<>();
        List<String> keys = keys(k, prefix);
        for (int j = 0; j < keys.size(); j++) {
            out.put(keys.get(j), ManagerApi.payload(14, k.ordinal() * 1_000_000L + prefix * 1_000L + j, settings.blockBytes()));
        }
        return out;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static long count(List<Request> trace, Kind k) {
        return trace.stream().filter(r -> r.kind() == k).count();
    }

    private static RunResult find(List<RunResult> rs, Mode m, int block) {
        return rs.stream().filter(r -> r.mode() == m && r.block() == block).findFirst().orElseThrow();
    }

    static long quantile(long[] nanos, double q) {
        long[] s = nanos.clone();
        Arrays.sort(s);
        return Stats.rank(s, q);
    }

    private static String spread(List<RunResult> rs, Slice slice, double q) {
        double[] v = rs.stream().filter(r -> r.of(slice).length > 0).mapToDouble(r -> quantile(r.of(slice), q) / 1e6).toArray();
        if (v.length == 0) {
            return "-";
        }
        return String.format(Locale.ROOT, "%.2f (%.2f..%.2f)", Stats.median(v), Arrays.stream(v).min().orElse(Double.NaN),
                Arrays.stream(v).max().orElse(Double.NaN));
    }

    /** Geometric mean of {@code ratios} and its seeded percentile-bootstrap 95 % interval (resampling the ratios). */
    Comparison compare(Mode m, String metric, double[] ratios) {
        double gm = IsolationRules.geometricMean(ratios);
        SplittableRandom random = new SplittableRandom(settings.seed() ^ metric.hashCode() ^ m.ordinal());
        double[] logs = Arrays.stream(ratios).map(Math::log).toArray();
        double[] gms = new double[RESAMPLES];
        for (int b = 0; b < RESAMPLES; b++) {
            double sum = 0;
            for (int i = 0; i < logs.length; i++) {
                sum += logs[random.nextInt(logs.length)];
            }
            gms[b] = Math.exp(sum / logs.length);
        }
        Arrays.sort(gms);
        return new Comparison(m, metric, ratios.clone(), gm, gms[(int) Math.floor(0.025 * (RESAMPLES - 1))],
                gms[(int) Math.ceil(0.975 * (RESAMPLES - 1))]);
    }

    private void report(RunResult r) {
        if (r.failure() != null) {
            run.report(String.format(Locale.ROOT, "run %s block %d: COLLECTION FAILED: %s", r.mode().option, r.block(), r.failure()));
            return;
        }
        run.report(String.format(Locale.ROOT, "run %-11s block %d: p50 %.2f ms, p99 %.2f ms; contested p50 %.2f ms, p99 %.2f ms; "
                        + "switches executed %d, shadow %d; contested served by the slowed peer %d of %d; decisions %s",
                r.mode().option, r.block(), quantile(r.nanos(), 0.5) / 1e6, quantile(r.nanos(), 0.99) / 1e6,
                quantile(r.of(Slice.CONTESTED), 0.5) / 1e6, quantile(r.of(Slice.CONTESTED), 0.99) / 1e6, r.switchesExecuted(), r.shadowSwitches(),
                r.slowRoutes(), r.contested(), r.decisions()));
    }

    private void report(Comparison c) {
        run.report(String.format(Locale.ROOT, "%s / fixed, %s: ratios %s, geometric mean %.3f, 95%% interval [%.3f, %.3f]: %s %s",
                c.mode().option, c.metric(), Arrays.stream(c.ratios()).mapToObj(x -> String.format(Locale.ROOT, "%.3f", x)).toList(),
                c.geometricMean(), c.lower(), c.upper(), c.mode().option, c.verdict()));
    }

    /** The selection field of an {@code X-OrbitKV-Route-Trace} header: mode, decision, whether the alternative executed. */
    static final Pattern SELECTION = Pattern.compile("sel=([a-z-]+):([a-z-]+)(:executed)?");

    static String decision(String traceHeader) {
        Matcher m = SELECTION.matcher(String.valueOf(traceHeader));
        return m.find() ? m.group(2) + (m.group(3) != null ? ":executed" : "") : "none";
    }
}
