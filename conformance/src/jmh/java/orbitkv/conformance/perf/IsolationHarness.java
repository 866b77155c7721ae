package orbitkv.conformance.perf;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerApi;
import orbitkv.conformance.manager.ManagerProcess;
import orbitkv.membership.MembershipAdmin;
import orbitkv.testing.ContractVerdicts;

/**
 * The isolation qualification (P6, PERF-3) exactly as the design's <em>Performance acceptance and ablations</em> states
 * it: a full Manager (a separate OS process with the runtime image's JVM settings) runs an identical local
 * save / query / restore workload under an <em>idle</em> inventory peer (arm A) and under a test-owned
 * <em>metadata-only pressure</em> peer (arm B). The peer is {@link PressurePeer} in its own JVM, registered with real
 * etcd membership and subscribed to by the Manager (scope fixed: AllNamespaces); in arm B it publishes a burst every
 * 17 ms (source cadence), in arm A it publishes nothing. The foreground issues one round per second (foreground
 * cadence); an observer samples the Manager's status every 25 ms in both arms (symmetric observer sampling).
 *
 * <p>A round: save {@code blocks} blocks of {@code blockBytes} carrying the 16-byte PERF-4 header (generation = round,
 * block index), over a key set periodic in {@value #KEY_PERIOD} rounds; query them; restore them and compare every
 * byte (real restore checks on). In SSD runs the Manager has an SSD tier; after the save the round waits for the SSD
 * write-through ({@code /cache/sync}) and evicts the DRAM copies (both untimed), so the query answers SSD residences
 * and the restore must be served from SSD ({@code local-ssd} in its route, and the SSD read counter at the end). The
 * timed endpoints are the three HTTP requests as the harness sees them.
 *
 * <p>A run has fresh processes (Manager, peer, cluster), {@code warmup} warm-up rounds at the same cadence and
 * condition (kept in the raw file) and {@code rounds} measured rounds. Pairs are order-balanced in ABBA / BAAB blocks
 * ({@link IsolationRules#idleFirst}) and interleaved across media. After the measured rounds the peer stops, the
 * Manager must have installed exactly the peer's final head, and every peer key is checked against the Manager's
 * index (owner, medium, sequence) before the peer deregisters. Each run's validity ({@link IsolationRules}) and the
 * Manager's per-thread CPU, context switches and schedstat deltas are reported for both arms. A run that fails
 * collection is kept as failed, with its reason.
 */
public final class IsolationHarness {
    /** Rounds after which the foreground key set repeats (the header's generation keeps every payload distinct). */
    static final int KEY_PERIOD = 251;
    static final String FOREGROUND_NS = "isolation/foreground";
    static final String PRESSURE_NS = "isolation/pressure";
    private static final Duration BOUND = Duration.ofSeconds(60);

    /** The medium the foreground restores from. */
    public enum Medium {
        DRAM, SSD
    }

    /** The two arms. */
    public enum Arm {
        IDLE("idle peer"), PRESSURE("pressure peer");

        final String label;

        Arm(String label) {
            this.label = label;
        }
    }

    /** The three timed endpoints. */
    public enum Op {
        SAVE, QUERY, RESTORE
    }

    /**
     * The matrix's parameters; the defaults are the formal qualification.
     *
     * @param pairs order-balanced pairs per medium
     * @param warmup warm-up rounds per run (≥ 50 to qualify)
     * @param rounds measured rounds per run (≥ 1,000 to qualify)
     * @param foregroundMs foreground cadence (1 s)
     * @param sourceMs the pressure peer's source cadence (17 ms)
     * @param observerMs the observer's sampling period (25 ms)
     * @param pressureBurst mutations per source tick
     * @param pressureResidences the peer's residences (both arms)
     */
    public record Settings(List<Medium> media, int pairs, int warmup, int rounds, long foregroundMs, long sourceMs, long observerMs,
            int blocks, int blockBytes, int pressureBurst, int pressureResidences, long seed) {
        public Settings {
            if (media.isEmpty() || pairs < 1 || warmup < 0 || rounds < 4 || foregroundMs < 1 || sourceMs < 1 || observerMs < 1 || blocks < 1
                    || blocks > 128 || blockBytes < 16 || pressureBurst < 1 || pressureResidences < 1) {
                throw new IllegalArgumentException("invalid isolation settings");
            }
            media = List.copyOf(media);
        }

        /** True iff the run counts as qualification (≥ 50 warm-up, ≥ 1,000 measured, ≥ 5 pairs, the declared cadences). */
        public boolean qualifying() {
            return warmup >= 50 && rounds >= 1000 && pairs >= 5 && foregroundMs == 1000 && sourceMs == 17 && observerMs == 25;
        }

        /** {@code bench.isolation.*} properties. */
        public static Settings fromProperties() {
            List<Medium> media = new ArrayList<>();
            for (String m : System.getProperty("bench.isolation.media", "DRAM,SSD").split(",")) {
                media.add(Medium.valueOf(m.strip().toUpperCase(java.util.Locale.ROOT)));
            }
            return new Settings(media, Integer.getInteger("bench.isolation.pairs", 5), Integer.getInteger("bench.isolation.warmup", 50),
                    Integer.getInteger("bench.isolation.rounds", 1000), Long.getLong("bench.isolation.foregroundMs", 1000),
                    Long.getLong("bench.isolation.sourceMs", 17), Long.getLong("bench.isolation.observerMs", 25),
                    Integer.getInteger("bench.isolation.blocks", 8), Integer.getInteger("bench.isolation.blockBytes", 64 << 10),
                    Integer.getInteger("bench.isolation.pressureBurst", 16), Integer.getInteger("bench.isolation.pressureResidences", 4096),
                    Long.getLong("bench.isolation.seed", 20261201L));
        }

        /** Wall time of the whole matrix, excluding the build: per run start-up, warm-up, measured rounds, checks. */
        public Duration expectedDuration() {
            long perRunMs = (warmup + rounds) * foregroundMs + 15_000;
            return Duration.ofMillis(perRunMs * 2L * pairs * media.size());
        }
    }

    /** One round's timings (harness monotonic clock) and what the restore was served from. */
    public record Round(int index, boolean warmup, long startNs, long[] opStartNs, long[] opEndNs, int ssdServed) {
        long latency(Op op) {
            return opEndNs[op.ordinal()] - opStartNs[op.ordinal()];
        }
    }

    /** One run: its identity, rounds, validity and diagnostics, or its collection failure. */
    public record RunResult(Medium medium, int pair, Arm arm, int order, List<Round> rounds, IsolationRules.Validity validity,
            ProcStat.ThreadDeltas managerThreads, Map<String, Double> processCores, long samplerPolls, long samplerBytes,
            double samplerCpuSeconds, long[] installOverlaps, long peerPublications, String failure) {
        boolean failed() {
            return failure != null;
        }

        boolean valid() {
            return !failed() && validity.valid();
        }

        long[] measured(Op op) {
            return rounds.stream().filter(r -> !r.warmup()).mapToLong(r -> r.latency(op)).toArray();
        }

        String label() {
            return medium + "-pair" + (pair + 1) + "-" + arm.name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** The verdicts of one medium. */
    public record MediumResult(Medium medium, List<RunResult[]> pairs, Map<Op, IsolationRules.Verdict> verdicts) {}

    private final Settings settings;
    private final BenchRun run;
    private final EtcdFixture etcd;
    private final Path work;

    private final ContractVerdicts verdicts;

    public IsolationHarness(Settings settings, BenchRun run, EtcdFixture etcd, Path work) {
        this.settings = settings;
        this.run = run;
        this.etcd = etcd;
        this.work = work;
        this.verdicts = new ContractVerdicts("IsolationHarness (PERF-3)", run::report);
    }

    /** This run's verdicts (issue 37 item 1); {@link ContractVerdicts#enforce()} is the caller's. */
    public ContractVerdicts verdicts() {
        return verdicts;
    }

    /** Runs the whole matrix (pairs interleaved across media), prints the tables and verdicts, writes raw files and plots. */
    public List<MediumResult> run() throws Exception {
        run.report("isolation qualification (P6, PERF-3): " + settings + (settings.qualifying() ? " [qualifying parameters]"
                : " [NOT qualifying parameters: a smoke or shortened run]") + "; expected duration "
                + settings.expectedDuration().toMinutes() + " min; processes per run: the Manager, the pressure peer JVM, this harness JVM, etcd");
        Map<Medium, List<RunResult[]>> byMedium = new LinkedHashMap<>();
        int order = 0;
        for (int p = 0; p < settings.pairs(); p++) {
            for (Medium m : settings.media()) {
                Arm first = IsolationRules.idleFirst(p) ? Arm.IDLE : Arm.PRESSURE;
                Arm second = first == Arm.IDLE ? Arm.PRESSURE : Arm.IDLE;
                RunResult a = runOne(m, p, first, order++);
                RunResult b = runOne(m, p, second, order++);
                RunResult[] pair = new RunResult[2];
                pair[Arm.IDLE.ordinal()] = first == Arm.IDLE ? a : b;
                pair[Arm.PRESSURE.ordinal()] = first == Arm.IDLE ? b : a;
                byMedium.computeIfAbsent(m, k -> new ArrayList<>()).add(pair);
            }
        }
        List<MediumResult> out = new ArrayList<>();
        for (Map.Entry<Medium, List<RunResult[]>> e : byMedium.entrySet()) {
            out.add(verdicts(e.getKey(), e.getValue()));
        }
        report(out);
        return out;
    }

    // ------------------------------------------------------------------ one run

    private RunResult runOne(Medium medium, int pair, Arm arm, int order) {
        String label = medium + "-pair" + (pair + 1) + "-" + arm.name().toLowerCase(java.util.Locale.ROOT);
        run.report("run " + (order + 1) + ": " + label);
        Path raw = run.dir().resolve("runs").resolve(label);
        Path tmp = null;
        Path shm = null;
        Peer peer = null;
        ManagerProcess manager = null;
        try {
            Files.createDirectories(raw);
            tmp = Files.createTempDirectory(work, "iso-");
            shm = Files.createTempDirectory(Path.of(Files.isDirectory(Path.of("/dev/shm")) ? "/dev/shm" : System.getProperty("java.io.tmpdir")),
                    "orbitkv-iso-");
            String cluster = "iso-" + UUID.randomUUID().toString().substring(0, 8);
            try (MembershipAdmin admin = MembershipAdmin.connect(etcd.endpoints(), cluster, 5_000)) {
                if (!(admin.format() instanceof MembershipAdmin.Formatted)) {
                    throw new IllegalStateException("cannot format " + cluster);
                }
            }
            long ticksMax = (settings.warmup() + settings.rounds() + 10L) * settings.foregroundMs() / settings.sourceMs() * 2 + 1000;
            peer = Peer.launch(raw, List.of("--etcd", etcd.endpoints().toString(), "--cluster", cluster, "--node", "pressure-peer",
                    "--namespace", PRESSURE_NS, "--residences", Integer.toString(settings.pressureResidences()), "--burst",
                    Integer.toString(settings.pressureBurst()), "--cadence-ms", Long.toString(settings.sourceMs()), "--ticks-max",
                    Long.toString(ticksMax), "--out", raw.toString()));
            List<String> args = new ArrayList<>(List.of("manager", "--cluster", cluster, "--node-id", "manager", "--etcd",
                    etcd.endpoints().toString(), "--http-listen", "127.0.0.1:0", "--peer-listen", "127.0.0.1:0", "--dram", "256MiB",
                    "--dram-dir", shm.toString(), "--block-bytes-max", "1MiB"));
            if (medium == Medium.SSD) {
                args.addAll(List.of("--ssd-dir", Files.createDirectories(tmp.resolve("ssd")).toString(), "--ssd", "512MiB"));
            }
            manager = ManagerProcess.launchAsImage("manager-" + label, raw.resolve("logs"), args);
            manager.awaitReady();
            ClockDomain.Domain domain = ClockDomain.check(List.of(manager.pid(), peer.pid()));
            ManagerApi api = new ManagerApi(manager.httpBase());
            RunResult r = collect(medium, pair, arm, order, raw, api, manager, peer, domain);
            ClockDomain.requireSameBoot(domain);
            manager.sigterm();
            manager.awaitExit(Duration.ofSeconds(30));
            run.report("  " + summary(r));
            return r;
        } catch (Throwable t) {
            String why = t.getClass().getSimpleName() + ": " + t.getMessage();
            run.report("  " + label + " FAILED COLLECTION (kept as a failed run): " + why);
            return new RunResult(medium, pair, arm, order, List.of(), null, null, Map.of(), 0, 0, 0, new long[3], 0, why);
        } finally {
            if (peer != null) {
                peer.close();
            }
            if (manager != null) {
                manager.close();
            }
            try {
                ManagerProcess.deleteTree(tmp);
                ManagerProcess.deleteTree(shm);
            } catch (IOException e) {
                run.report("  cleanup of " + tmp + " / " + shm + " failed: " + e);
            }
        }
    }

    private RunResult collect(Medium medium, int pair, Arm arm, int order, Path raw, ManagerApi api, ManagerProcess manager, Peer peer,
            ClockDomain.Domain domain) throws Exception {
        String peerInc = peer.incarnation();
        long peerHead = peer.readyHead();
        List<IsolationRules.ObserverPoll> polls = new ArrayList<>();
        int pollsMax = (int) Math.min(Integer.MAX_VALUE - 8, (settings.warmup() + settings.rounds() + 30L) * settings.foregroundMs()
                / settings.observerMs() * 2 + 10_000);
        try (StatusSampler sampler = new StatusSampler(api, Duration.ofMillis(settings.observerMs()), p -> {
            for (JsonNode o : p.status().get("owners")) {
                if (o.at("/owner/incarnation").asText().equals(peerInc) && polls.size() < pollsMax) {
                    JsonNode inst = o.get("installed");
                    synchronized (polls) {
                        polls.add(new IsolationRules.ObserverPoll(p.startNs(), p.endNs(), inst.get("sequence").asLong(-1),
                                inst.get("mono_ns").asLong(-1)));
                    }
                }
            }
        })) {
            sampler.await(peerInc, r -> "INSTALLED".equals(r.state()) && r.installedSequence() >= peerHead, BOUND,
                    "the Manager's installed view of the peer at " + peerHead);
            if (arm == Arm.PRESSURE) {
                peer.command("start", "pressure-peer started");
            }
            List<Round> rounds = new ArrayList<>();
            long period = TimeUnit.MILLISECONDS.toNanos(settings.foregroundMs());
            long t0 = System.nanoTime() + period;
            Map<Integer, ProcStat.ThreadSample> threads0 = null;
            Map<String, ProcStat.ProcessSample> procs0 = null;
            long polls0 = 0;
            long bytes0 = 0;
            long cpu0 = 0;
            long measuredStart = 0;
            String metrics0 = null;
            for (int k = 0; k < settings.warmup() + settings.rounds(); k++) {
                long at = t0 + k * period;
                boolean warm = k < settings.warmup();
                if (k == settings.warmup()) {
                    long snapAt = at - 50_000_000L; // snapshot just before the first measured round
                    for (long w = snapAt - System.nanoTime(); w > 0; w = snapAt - System.nanoTime()) {
                        LockSupport.parkNanos(w);
                    }
                    threads0 = ProcStat.threads(manager.pid());
                    procs0 = processes(manager, peer);
                    polls0 = sampler.polls();
                    bytes0 = sampler.responseBytes();
                    cpu0 = sampler.threadCpuNanos();
                    metrics0 = api.get("/metrics").text();
                    measuredStart = at;
                }
                for (long w = at - System.nanoTime(); w > 0; w = at - System.nanoTime()) {
                    LockSupport.parkNanos(w); // the declared foreground cadence, not a synchronization (may return early)
                }
                rounds.add(round(api, medium, k, warm, Math.max(at, System.nanoTime())));
            }
            long measuredEnd = rounds.getLast().opEndNs()[Op.RESTORE.ordinal()];
            Map<Integer, ProcStat.ThreadSample> threads1 = ProcStat.threads(manager.pid());
            Map<String, ProcStat.ProcessSample> procs1 = processes(manager, peer);
            long polls1 = sampler.polls();
            long bytes1 = sampler.responseBytes();
            long cpu1 = sampler.threadCpuNanos();
            String metrics1 = api.get("/metrics").text();

            // The peer stops (both arms); the Manager must install exactly its final head; then key by key.
            long head = Long.parseLong(peer.command("stop", "pressure-peer stopped").replaceAll(".*head=(\\d+).*", "$1"));
            StatusSampler.Row last = sampler.await(peerInc, r -> r.installedSequence() >= head, BOUND, "the peer's final head " + head);
            if (arm == Arm.PRESSURE && last.installedSequence() != head) {
                throw new VisibilityHarness.CollectionFailed("the Manager installed " + last.installedSequence() + " past the peer's final head " + head);
            }
            checkFinalState(api, peerInc, raw.resolve("source-final-state.csv"));
            if (medium == Medium.SSD) {
                double ssdReads = PromText.sum(metrics1, "orbitkv_tier_reads", Map.of("medium", "SSD"))
                        - PromText.sum(metrics0, "orbitkv_tier_reads", Map.of("medium", "SSD"));
                long needed = (long) settings.rounds() * settings.blocks();
                if (ssdReads < needed) {
                    throw new VisibilityHarness.CollectionFailed("SSD read counter rose by " + ssdReads + " over " + settings.rounds()
                            + " measured rounds of " + settings.blocks() + " blocks (needs >= " + needed + ")");
                }
            }
            List<IsolationRules.SourceTick> ticks = readTicks(raw.resolve("source-ticks.csv"));
            List<IsolationRules.ObserverPoll> obs;
            synchronized (polls) {
                obs = new ArrayList<>(polls);
            }
            IsolationRules.Validity v = arm == Arm.PRESSURE
                    ? IsolationRules.pressure(ticks, obs, measuredStart, measuredEnd, TimeUnit.MILLISECONDS.toNanos(settings.sourceMs()), period)
                    : IsolationRules.idle(ticks, obs, measuredStart, measuredEnd, period);
            long pubs = ticks.stream().filter(t -> t.lastPublicationNs() >= 0).count();
            ProcStat.ThreadDeltas deltas = ProcStat.delta(threads0, threads1);
            Map<String, Double> cores = new LinkedHashMap<>();
            for (Map.Entry<String, ProcStat.ProcessSample> e : procs1.entrySet()) {
                cores.put(e.getKey(), e.getValue().coresBusySince(procs0.get(e.getKey())));
            }
            RunResult r = new RunResult(medium, pair, arm, order, rounds, v, deltas, cores, polls1 - polls0, bytes1 - bytes0, (cpu1 - cpu0) / 1e9,
                    overlaps(rounds, obs, measuredStart, measuredEnd), pubs, null);
            writeRaw(raw, r, obs, deltas);
            return r;
        }
    }

    private Map<String, ProcStat.ProcessSample> processes(ManagerProcess manager, Peer peer) {
        Map<String, ProcStat.ProcessSample> m = new LinkedHashMap<>();
        m.put("manager", ProcStat.process(manager.pid()));
        m.put("peer", ProcStat.process(peer.pid()));
        m.put("harness", ProcStat.process(ProcessHandle.current().pid()));
        m.put("etcd", ProcStat.process(etcd.member(0).pid()));
        return m;
    }

    /** One foreground round; every check failing throws (collection fails). */
    private Round round(ManagerApi api, Medium medium, int k, boolean warm, long start) {
        long generation = k + 1L;
        int slot = k % KEY_PERIOD;
        Map<String, byte[]> blocks = new LinkedHashMap<>();
        List<String> keys = new ArrayList<>();
        for (int j = 0; j < settings.blocks(); j++) {
            String key = String.format("%016x%016x", slot, j);
            keys.add(key);
            blocks.put(key, ManagerApi.payload(generation, j, settings.blockBytes()));
        }
        long[] s = new long[3];
        long[] e = new long[3];
        s[0] = System.nanoTime();
        ManagerApi.Reply save = api.save(FOREGROUND_NS, blocks);
        e[0] = System.nanoTime();
        require(save.status() == 200 && save.json().get("saved").size() == keys.size(), k, "save", save);
        if (medium == Medium.SSD) {
            ManagerApi.Reply sync = api.sync();
            require(sync.status() == 200, k, "sync (SSD write-through)", sync);
            ManagerApi.Reply ev = api.evict(FOREGROUND_NS, keys, "DRAM");
            require(ev.status() == 200 && ev.json().get("evicted").asLong() == keys.size(), k, "evict DRAM", ev);
        }
        s[1] = System.nanoTime();
        // one timed query: a lean cross-check would double it, and the pressure arm moves the view between the two
        ManagerApi.Reply query = api.queryFullOnly(FOREGROUND_NS, keys);
        e[1] = System.nanoTime();
        require(query.status() == 200, k, "query", query);
        JsonNode cands = query.json().get("candidates");
        for (int j = 0; j < keys.size(); j++) {
            boolean local = false;
            for (JsonNode rep : cands.get(j).get("replicas")) {
                local |= rep.get("local").asBoolean() && rep.get("medium").asText().equals(medium.name());
            }
            require(local, k, "query: no local " + medium + " replica of " + keys.get(j), query);
        }
        s[2] = System.nanoTime();
        ManagerApi.Reply restore = api.restore(FOREGROUND_NS, keys);
        e[2] = System.nanoTime();
        require(restore.status() == 200 && Integer.toString(keys.size()).equals(restore.header("X-OrbitKV-Restored")), k, "restore", restore);
        Map<String, byte[]> got = ManagerApi.unframe(restore.body());
        for (int j = 0; j < keys.size(); j++) {
            byte[] p = got.get(keys.get(j));
            long[] h = p == null || p.length < 16 ? new long[] {-1, -1} : ManagerApi.header(p);
            if (p == null || !Arrays.equals(p, blocks.get(keys.get(j))) || h[0] != generation || h[1] != j) {
                throw new VisibilityHarness.CollectionFailed("round " + k + ": restored block " + keys.get(j) + " is not byte-exact (header "
                        + Arrays.toString(h) + ", expected [" + generation + ", " + j + "])");
            }
        }
        int ssd = 0;
        String route = restore.header("X-OrbitKV-Route");
        if (medium == Medium.SSD) {
            // X-OrbitKV-Route names each served run with its block range: "routes=local-ssd[0,4):ready"
            java.util.regex.Matcher runs = java.util.regex.Pattern.compile("local-ssd\\[(\\d+),(\\d+)\\)")
                    .matcher(route == null ? "" : route);
            while (runs.find()) {
                ssd += Integer.parseInt(runs.group(2)) - Integer.parseInt(runs.group(1));
            }
            require(ssd == keys.size(), k, "restore not served from SSD (route " + route + ")", restore);
        }
        return new Round(k, warm, start, s, e, ssd);
    }

    private static void require(boolean ok, int round, String what, ManagerApi.Reply r) {
        if (!ok) {
            throw new VisibilityHarness.CollectionFailed("round " + round + ": " + what + " (status " + r.status() + ": "
                    + (r.body().length > 300 ? new String(r.body(), 0, 300, StandardCharsets.UTF_8) : r.text()) + ")");
        }
    }

    /** The final source window, key by key: each peer key's replica in the Manager's index names its exact sequence. */
    private void checkFinalState(ManagerApi api, String peerInc, Path state) throws IOException {
        List<String[]> rows = Files.readAllLines(state).stream().skip(1).map(l -> l.split(",")).toList();
        int mismatches = 0;
        String first = null;
        for (int i = 0; i < rows.size(); i += 128) {
            List<String[]> batch = rows.subList(i, Math.min(rows.size(), i + 128));
            ManagerApi.Reply q = api.query(PRESSURE_NS, batch.stream().map(r -> r[0]).toList());
            require(q.status() == 200, -1, "final-state query", q);
            JsonNode c = q.json().get("candidates");
            for (int j = 0; j < batch.size(); j++) {
                long expected = Long.parseLong(batch.get(j)[2]);
                long seen = -1;
                for (JsonNode rep : c.get(j).get("replicas")) {
                    if (rep.at("/owner/incarnation").asText().equals(peerInc) && rep.get("medium").asText().equals(batch.get(j)[1])) {
                        seen = rep.get("sequence").asLong();
                    }
                }
                if (seen != expected) {
                    mismatches++;
                    if (first == null) {
                        first = batch.get(j)[0] + " expected " + expected + " indexed " + seen;
                    }
                }
            }
        }
        if (mismatches > 0) {
            throw new VisibilityHarness.CollectionFailed(mismatches + " peer keys differ between the source's final state and the Manager's index "
                    + "(first: " + first + ")");
        }
    }

    private static List<IsolationRules.SourceTick> readTicks(Path p) throws IOException {
        List<IsolationRules.SourceTick> out = new ArrayList<>();
        for (String l : Files.readAllLines(p).stream().skip(1).toList()) {
            String[] f = l.split(",");
            out.add(new IsolationRules.SourceTick(Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]),
                    Long.parseLong(f[4])));
        }
        return out;
    }

    /**
     * Conservative positive install-overlap counts: measured operations whose interval contains an install stamp the
     * observer saw (the status keeps only the latest stamp, so a missed install is unknown, never counted).
     */
    static long[] overlaps(List<Round> rounds, List<IsolationRules.ObserverPoll> polls, long start, long end) {
        List<Long> stamps = new ArrayList<>();
        long prev = Long.MIN_VALUE;
        for (IsolationRules.ObserverPoll p : polls) {
            if (p.installedMonoNs() != prev && p.installedMonoNs() >= start && p.installedMonoNs() <= end) {
                stamps.add(p.installedMonoNs());
            }
            prev = p.installedMonoNs();
        }
        long[] sorted = stamps.stream().mapToLong(Long::longValue).sorted().toArray();
        long[] out = new long[3];
        for (Round r : rounds) {
            if (r.warmup()) {
                continue;
            }
            for (Op op : Op.values()) {
                int i = Arrays.binarySearch(sorted, r.opStartNs()[op.ordinal()]);
                int at = i >= 0 ? i : -i - 1;
                if (at < sorted.length && sorted[at] <= r.opEndNs()[op.ordinal()]) {
                    out[op.ordinal()]++;
                }
            }
        }
        return out;
    }

    private void writeRaw(Path raw, RunResult r, List<IsolationRules.ObserverPoll> polls, ProcStat.ThreadDeltas deltas) {
        List<String> rows = new ArrayList<>();
        for (Round x : r.rounds()) {
            rows.add(x.index() + "," + (x.warmup() ? "warmup" : "measured") + "," + x.startNs() + "," + x.opStartNs()[0] + "," + x.opEndNs()[0]
                    + "," + x.opStartNs()[1] + "," + x.opEndNs()[1] + "," + x.opStartNs()[2] + "," + x.opEndNs()[2] + "," + x.ssdServed());
        }
        run.csv("runs/" + r.label() + "/rounds.csv", "round,phase,start_ns,save_start_ns,save_end_ns,query_start_ns,query_end_ns,restore_start_ns,"
                + "restore_end_ns,ssd_served", rows);
        List<String> obs = new ArrayList<>();
        for (IsolationRules.ObserverPoll p : polls) {
            obs.add(p.startNs() + "," + p.endNs() + "," + p.installedSequence() + "," + p.installedMonoNs());
        }
        run.csv("runs/" + r.label() + "/observer.csv", "poll_start_ns,poll_end_ns,installed_sequence,installed_mono_ns", obs);
        run.csv("runs/" + r.label() + "/manager-threads.csv", "arm,group,threads,cpu_ticks,voluntary_switches,involuntary_switches,run_ns,"
                + "runqueue_wait_ns,timeslices", deltas.csv(r.arm().name()));
    }

    // ------------------------------------------------------------------ the peer process

    /** The pressure peer's JVM: launched with the harness's classes, controlled line by line on stdin. */
    static final class Peer implements AutoCloseable {
        private final Process process;
        private final Writer in;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final String ready;

        private Peer(Process process, Path raw) throws IOException {
            this.process = process;
            this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            Path log = raw.resolve("peer.out");
            Thread.ofPlatform().daemon(true).name("pressure-peer-out").start(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    String l;
                    while ((l = r.readLine()) != null) {
                        Files.writeString(log, l + "\n", StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE,
                                java.nio.file.StandardOpenOption.APPEND);
                        if (l.startsWith("pressure-peer ")) {
                            lines.add(l);
                        }
                    }
                } catch (IOException e) {
                    lines.add("pressure-peer output closed: " + e);
                }
            });
            this.ready = expect("pressure-peer ready");
        }

        static Peer launch(Path raw, List<String> args) throws IOException {
            List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(), "-Xmx512m",
                    "--sun-misc-unsafe-memory-access=allow", "--enable-native-access=ALL-UNNAMED",
                    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", PressurePeer.childClassPath(), PressurePeer.class.getName()));
            cmd.addAll(args);
            Process p = new ProcessBuilder(cmd).redirectError(raw.resolve("peer.err").toFile()).start();
            return new Peer(p, raw);
        }

        private String expect(String prefix) {
            try {
                String l = lines.poll(BOUND.toMillis(), TimeUnit.MILLISECONDS);
                if (l == null || !l.startsWith(prefix)) {
                    throw new IllegalStateException("pressure peer: expected '" + prefix + "', got " + l + " (alive=" + process.isAlive() + ")");
                }
                return l;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        String command(String word, String expectPrefix) throws IOException {
            in.write(word + "\n");
            in.flush();
            return expect(expectPrefix);
        }

        String incarnation() {
            return ready.replaceAll(".* incarnation=(\\S+).*", "$1");
        }

        long readyHead() {
            return Long.parseLong(ready.replaceAll(".* head=(\\d+).*", "$1"));
        }

        long pid() {
            return process.pid();
        }

        @Override
        public void close() {
            try {
                if (process.isAlive()) {
                    in.write("exit\n");
                    in.flush();
                }
            } catch (IOException ignored) {
                // the peer already closed its input
            }
            try {
                if (!process.waitFor(15, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    // ------------------------------------------------------------------ verdicts and report

    private MediumResult verdicts(Medium medium, List<RunResult[]> pairs) {
        Map<Op, IsolationRules.Verdict> v = new LinkedHashMap<>();
        boolean valid = pairs.stream().allMatch(p -> p[0].valid() && p[1].valid());
        boolean collected = pairs.stream().noneMatch(p -> p[0].failed() || p[1].failed());
        for (Op op : Op.values()) {
            if (!collected) {
                continue;
            }
            double[] ratios = new double[pairs.size()];
            for (int i = 0; i < pairs.size(); i++) {
                RunResult[] p = pairs.get(i);
                ratios[i] = (double) IsolationRules.p99(p[Arm.PRESSURE.ordinal()].measured(op)) / IsolationRules.p99(p[Arm.IDLE.ordinal()].measured(op));
            }
            v.put(op, IsolationRules.verdict(ratios, valid, settings.seed()));
        }
        return new MediumResult(medium, pairs, v);
    }

    private static String summary(RunResult r) {
        StringBuilder b = new StringBuilder(r.label()).append(": ");
        for (Op op : Op.values()) {
            Stats s = Stats.of(r.measured(op));
            b.append(String.format("%s p50 %.3f p99 %.3f max %.3f ms; ", op.name().toLowerCase(java.util.Locale.ROOT), s.p50Ms(), s.p99Ms(), s.maxMs()));
        }
        ProcStat.Group t = r.managerThreads().total();
        b.append(String.format("manager threads: %d surviving, %d started, %d exited, cpu %.2f s, switches %d voluntary / %d involuntary, "
                + "run-queue wait %.1f ms%s; cores busy %s; observer %d polls, %,d B, sampler CPU %.2f s; install overlaps save/query/restore %s; "
                + "%s", r.managerThreads().surviving(), r.managerThreads().started(), r.managerThreads().exited(), t.cpuTicks() / ProcStat.TICKS_PER_SECOND,
                t.voluntary(), t.involuntary(), t.waitNanos() / 1e6, r.managerThreads().schedstat() ? "" : " (no schedstat)", fmt(r.processCores()),
                r.samplerPolls(), r.samplerBytes(), r.samplerCpuSeconds(), Arrays.toString(r.installOverlaps()), r.validity().summary()));
        return b.toString();
    }

    private static String fmt(Map<String, Double> m) {
        StringBuilder b = new StringBuilder("{");
        m.forEach((k, v) -> b.append(b.length() > 1 ? ", " : "").append(k).append(String.format(" %.3f", v)));
        return b.append('}').toString();
    }

    private void report(List<MediumResult> results) {
        run.report("Isolation verdicts (frozen: every per-run p99 ratio <= 1.05 and the 95 % bootstrap upper bound of the paired geometric-mean "
                + "ratio <= 1.05; " + IsolationRules.RESAMPLES + " resamples of pairs, seed " + settings.seed() + ")"
                + (settings.qualifying() ? "" : " [NOT qualifying parameters]"));
        for (MediumResult m : results) {
            run.report("| " + m.medium() + " pair | order | run validity (idle / pressure) | save p99 ms idle / pressure | ratio | query p99 ms idle / pressure "
                    + "| ratio | restore p99 ms idle / pressure | ratio |");
            run.report("|---|---|---|---|---|---|---|---|---|");
            for (int i = 0; i < m.pairs().size(); i++) {
                RunResult[] p = m.pairs().get(i);
                RunResult a = p[Arm.IDLE.ordinal()];
                RunResult b = p[Arm.PRESSURE.ordinal()];
                StringBuilder row = new StringBuilder(String.format("| %d | %s | %s / %s |", i + 1, a.order() < b.order() ? "AB (idle first)" : "BA (pressure first)",
                        state(a), state(b)));
                for (Op op : Op.values()) {
                    if (a.failed() || b.failed()) {
                        row.append(" — | — |");
                        continue;
                    }
                    double pa = IsolationRules.p99(a.measured(op)) / 1e6;
                    double pb = IsolationRules.p99(b.measured(op)) / 1e6;
                    row.append(String.format(" %.3f / %.3f | %.4f |", pa, pb, pb / pa));
                }
                run.report(row.toString());
            }
            for (Map.Entry<Op, IsolationRules.Verdict> e : m.verdicts().entrySet()) {
                IsolationRules.Verdict v = e.getValue();
                String contract = String.format("PERF-3 isolation %s %s p99, pressure / idle", m.medium(), e.getKey().name().toLowerCase(java.util.Locale.ROOT));
                String threshold = "every per-run ratio and the bootstrap 95 % upper bound ≤ " + IsolationRules.RATIO_MAX;
                String spread = "per-run " + Arrays.toString(Arrays.stream(v.ratios()).map(x -> Math.round(x * 10000) / 10000.0).toArray());
                if (!v.everyRunValid()) {
                    verdicts.collectionFailed(contract, threshold, "an invalid run (polling or source gap); " + spread);
                } else {
                    verdicts.check(contract, threshold, String.format(java.util.Locale.ROOT, "upper bound %.4f, geometric mean %.4f", v.upperBound(),
                            v.geometricMean()), spread, v.pass());
                }
            }
            if (m.verdicts().isEmpty()) {
                verdicts.collectionFailed("PERF-3 isolation " + m.medium(), "≤ " + IsolationRules.RATIO_MAX, "a run failed (see above): no verdict");
            }
            plots(m);
        }
        run.report("  raw files (warm-up and measured rounds, observer polls, source ticks, thread deltas per run): " + run.dir());
    }

    private static String state(RunResult r) {
        return r.failed() ? "FAILED" : r.validity().valid() ? "valid" : "INVALID";
    }

    private void plots(MediumResult m) {
        Map<String, Map<String, Double>> ratios = new LinkedHashMap<>();
        for (Map.Entry<Op, IsolationRules.Verdict> e : m.verdicts().entrySet()) {
            Map<String, Double> byPair = new LinkedHashMap<>();
            double[] r = e.getValue().ratios();
            for (int i = 0; i < r.length; i++) {
                byPair.put("pair " + (i + 1), r[i]);
            }
            byPair.put("GM", e.getValue().geometricMean());
            byPair.put("GM 95% UB", e.getValue().upperBound());
            ratios.put(e.getKey().name().toLowerCase(java.util.Locale.ROOT), byPair);
        }
        String med = m.medium().name().toLowerCase(java.util.Locale.ROOT);
        if (!ratios.isEmpty()) {
            Plots.barsWithThreshold(run, "isolation-ratios-" + med + ".png", m.medium() + ": per-run p99 ratio pressure / idle (PERF-3)",
                    "p99 ratio", ratios, IsolationRules.RATIO_MAX, 0.5);
        }
        Map<String, long[]> cdf = new LinkedHashMap<>();
        for (Op op : Op.values()) {
            for (Arm arm : Arm.values()) {
                long[] all = m.pairs().stream().map(p -> p[arm.ordinal()]).filter(r -> !r.failed()).flatMapToLong(r -> Arrays.stream(r.measured(op)))
                        .toArray();
                if (all.length > 0) {
                    cdf.put(op.name().toLowerCase(java.util.Locale.ROOT) + ", " + arm.label, all);
                }
            }
        }
        if (!cdf.isEmpty()) {
            Plots.cdf(run, "isolation-cdf-" + med + ".png", m.medium() + ": foreground latency, idle vs pressure peer (all measured rounds)", cdf);
        }
    }
}
