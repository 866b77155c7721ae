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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerApi;
import orbitkv.conformance.manager.ManagerProcess;
import orbitkv.membership.MembershipAdmin;
import orbitkv.testing.ContractVerdicts;

/**
 * The isolation qualification (P6, PERF-3) exactly as the design's <em>Performance acceptance and ablations</em> states
 * it: a full Manager (a separate OS process with the runtime image's JVM settings) runs an identical foreground
 * workload under an <em>idle</em> inventory peer (arm A) and under a test-owned <em>metadata-only pressure</em> peer
 * (arm B). The peer is {@link PressurePeer} in its own JVM, registered with real etcd membership and subscribed to by
 * the Manager (scope fixed: AllNamespaces); in arm B it publishes a burst every 17 ms (source cadence), in arm A it
 * publishes nothing. The foreground issues one round per second (foreground cadence); an observer samples the
 * Manager's status every 25 ms in both arms (symmetric observer sampling).
 *
 * <p>A round: save {@code blocks} blocks of {@code blockBytes} carrying the 16-byte PERF-4 header (generation = round,
 * block index), over a key set periodic in {@value #KEY_PERIOD} rounds; query them; restore them and compare every
 * byte (real restore checks on). In SSD runs the Manager has an SSD tier; after the save the round waits for the SSD
 * write-through ({@code /cache/sync}) and evicts the DRAM copies (both untimed), so the query answers SSD residences
 * and the restore must be served from SSD ({@code local-ssd} in its route, and the SSD read counter at the end). Then
 * (issue 37 item 4; {@code bench.isolation.peerRestore}, default on) a fourth timed operation,
 * {@link Op#PEER_RESTORE}: a second Manager of the run's cluster, the <em>data peer</em> (its own DRAM directory, no
 * SSD tier), saves {@code blocks} blocks of its own, and once the measured Manager lists them (untimed, bounded) the
 * measured Manager restores them over the peer TCP route, whose READs are pipelined on each data connection
 * ({@link IsolationPeerForeground}). In SSD runs this peer restore still reads the data peer's DRAM: the SSD arm's
 * medium is the local restore's. The data peer's own publications (one save per round) reach the measured Manager
 * alike in both arms; the pressure peer's are the difference. The timed endpoints are the HTTP requests as the
 * harness sees them.
 *
 * <p>A run has fresh processes (Manager, data peer, pressure peer, cluster), {@code warmup} warm-up rounds at the same
 * cadence and condition (kept in the raw file) and {@code rounds} measured rounds. Pairs are order-balanced in ABBA /
 * BAAB blocks ({@link IsolationRules#idleFirst}) and interleaved across media. After the measured rounds the peer
 * stops, the Manager must have installed exactly the peer's final head, and every peer key is checked against the
 * Manager's index (owner, medium, sequence) before the peer deregisters. Each run's validity ({@link IsolationRules})
 * and the Manager's per-thread CPU, context switches and schedstat deltas are reported for both arms. A run that fails
 * collection is kept as failed, with its reason.
 *
 * <p>Calibration ({@code bench.isolation.calibrate}, issue 37 item 4): both runs of every pair are idle-peer runs, the
 * second one {@link Arm#IDLE_TWIN}, order-balanced the same way. The report prints the same per-pair table and, per
 * medium and operation, the statistic's noise floor on this machine ({@link IsolationRules#noiseFloor}) as REPORTED
 * rows, never judged: what the paired ratio and its bootstrap bound read when nothing differs.
 *
 * <p>Resume ({@code bench.isolation.resumeDir}; {@link IsolationResume}): the formal matrix (≈ 6 h) is longer than
 * one sitting, so every collected pair is kept there and a later sitting with the same settings' fingerprint loads it
 * instead of running it again; {@code bench.isolation.pairsThisSitting} ends a sitting after that many new pairs.
 * The verdicts are computed over loaded and new pairs together; a matrix with fewer recorded pairs than
 * {@code pairs} per medium gets COLLECTION FAILED rows that say how many are recorded and how to resume.
 */
public final class IsolationHarness {
    /** Rounds after which the foreground key set repeats (the header's generation keeps every payload distinct). */
    static final int KEY_PERIOD = 251;
    static final String FOREGROUND_NS = "isolation/foreground";
    static final String PRESSURE_NS = "isolation/pressure";
    /** {@code bench.isolation.pairsThisSitting}'s default: no stop before the matrix is complete. */
    public static final int ALL_PAIRS = Integer.MAX_VALUE;
    /** Index of a pair's idle run (the ratio's denominator) and of the other run (pressure, or the calibration twin). */
    static final int BASELINE = 0;
    static final int TREATMENT = 1;
    private static final Duration BOUND = Duration.ofSeconds(60);

    /** The medium the foreground restores from. */
    public enum Medium {
        DRAM, SSD
    }

    /** The arms: idle and pressure, or idle and its calibration twin. {@code tag} ends the run's label. */
    public enum Arm {
        IDLE("idle", "idle peer"), PRESSURE("pressure", "pressure peer"), IDLE_TWIN("idle2", "idle peer (calibration twin)");

        final String tag;
        final String label;

        Arm(String tag, String label) {
            this.tag = tag;
            this.label = label;
        }
    }

    /** The timed endpoints; {@link #PEER_RESTORE} only with {@code peerRestore}. */
    public enum Op {
        SAVE, QUERY, RESTORE, PEER_RESTORE;

        String text() {
            return name().toLowerCase(Locale.ROOT).replace('_', ' ');
        }
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
     * @param calibrate true: both runs of a pair are idle (the calibration: reported, not judged)
     * @param peerRestore true: every round also times a peer restore from the data peer (required to qualify)
     * @param resumeDir where collected pairs are kept and loaded from; empty: off (not part of the fingerprint)
     * @param pairsThisSitting new pairs this sitting runs at most, loaded pairs not counted; {@link #ALL_PAIRS}: no
     *     stop (not part of the fingerprint: sittings of one matrix differ in it)
     */
    public record Settings(List<Medium> media, int pairs, int warmup, int rounds, long foregroundMs, long sourceMs, long observerMs,
            int blocks, int blockBytes, int pressureBurst, int pressureResidences, long seed, boolean calibrate, boolean peerRestore,
            String resumeDir, int pairsThisSitting) {
        public Settings {
            if (media.isEmpty() || pairs < 1 || warmup < 0 || rounds < 4 || foregroundMs < 1 || sourceMs < 1 || observerMs < 1 || blocks < 1
                    || blocks > 128 || blockBytes < 16 || pressureBurst < 1 || pressureResidences < 1 || pairsThisSitting < 0) {
                throw new IllegalArgumentException("invalid isolation settings");
            }
            media = List.copyOf(media);
            resumeDir = resumeDir == null ? "" : resumeDir.strip();
        }

        /** The judged matrix with the peer restore, no resume directory, no stop. */
        public Settings(List<Medium> media, int pairs, int warmup, int rounds, long foregroundMs, long sourceMs, long observerMs,
                int blocks, int blockBytes, int pressureBurst, int pressureResidences, long seed) {
            this(media, pairs, warmup, rounds, foregroundMs, sourceMs, observerMs, blocks, blockBytes, pressureBurst, pressureResidences, seed,
                    false, true, "", ALL_PAIRS);
        }

        /** These settings as an idle / idle calibration ({@code on}) or a judged matrix. */
        public Settings calibration(boolean on) {
            return new Settings(media, pairs, warmup, rounds, foregroundMs, sourceMs, observerMs, blocks, blockBytes, pressureBurst,
                    pressureResidences, seed, on, peerRestore, resumeDir, pairsThisSitting);
        }

        /** These settings with the peer restore on or off. */
        public Settings withPeerRestore(boolean on) {
            return new Settings(media, pairs, warmup, rounds, foregroundMs, sourceMs, observerMs, blocks, blockBytes, pressureBurst,
                    pressureResidences, seed, calibrate, on, resumeDir, pairsThisSitting);
        }

        /** These settings keeping pairs in {@code dir} and running at most {@code newPairs} new ones. */
        public Settings resumable(String dir, int newPairs) {
            return new Settings(media, pairs, warmup, rounds, foregroundMs, sourceMs, observerMs, blocks, blockBytes, pressureBurst,
                    pressureResidences, seed, calibrate, peerRestore, dir, newPairs);
        }

        /**
         * True iff the run counts as qualification (≥ 50 warm-up, ≥ 1,000 measured, ≥ 5 pairs, the declared cadences,
         * the peer restore in the foreground); a calibration with these parameters is the formal calibration.
         */
        public boolean qualifying() {
            return warmup >= 50 && rounds >= 1000 && pairs >= 5 && foregroundMs == 1000 && sourceMs == 17 && observerMs == 25 && peerRestore;
        }

        /** {@code bench.isolation.*} properties. */
        public static Settings fromProperties() {
            List<Medium> media = new ArrayList<>();
            for (String m : System.getProperty("bench.isolation.media", "DRAM,SSD").split(",")) {
                media.add(Medium.valueOf(m.strip().toUpperCase(Locale.ROOT)));
            }
            return new Settings(media, Integer.getInteger("bench.isolation.pairs", 5), Integer.getInteger("bench.isolation.warmup", 50),
                    Integer.getInteger("bench.isolation.rounds", 1000), Long.getLong("bench.isolation.foregroundMs", 1000),
                    Long.getLong("bench.isolation.sourceMs", 17), Long.getLong("bench.isolation.observerMs", 25),
                    Integer.getInteger("bench.isolation.blocks", 8), Integer.getInteger("bench.isolation.blockBytes", 64 << 10),
                    Integer.getInteger("bench.isolation.pressureBurst", 16), Integer.getInteger("bench.isolation.pressureResidences", 4096),
                    Long.getLong("bench.isolation.seed", 20261201L),
                    Boolean.parseBoolean(System.getProperty("bench.isolation.calibrate", "false")),
                    Boolean.parseBoolean(System.getProperty("bench.isolation.peerRestore", "true")),
                    System.getProperty("bench.isolation.resumeDir", ""), Integer.getInteger("bench.isolation.pairsThisSitting", ALL_PAIRS));
        }

        /**
         * Every setting that shapes a figure, in a fixed order: pairs of one matrix share it; {@code resumeDir} and
         * {@code pairsThisSitting} only say where the pairs are kept and when a sitting ends, so they are not in it.
         */
        public String fingerprint() {
            return String.format(Locale.ROOT, "media=%s pairs=%d warmup=%d rounds=%d foregroundMs=%d sourceMs=%d observerMs=%d blocks=%d "
                    + "blockBytes=%d pressureBurst=%d pressureResidences=%d seed=%d calibrate=%b peerRestore=%b observer=%s",
                    media.stream().map(Enum::name).collect(Collectors.joining(",")), pairs, warmup, rounds, foregroundMs, sourceMs, observerMs,
                    blocks, blockBytes, pressureBurst, pressureResidences, seed, calibrate, peerRestore, StatusSampler.METHOD);
        }

        /** The timed operations of every round. */
        public List<Op> ops() {
            return peerRestore ? List.of(Op.values()) : List.of(Op.SAVE, Op.QUERY, Op.RESTORE);
        }

        /** The arm of a pair's second run kind: pressure, or the calibration's idle twin. */
        public Arm treatment() {
            return calibrate ? Arm.IDLE_TWIN : Arm.PRESSURE;
        }

        /** Pairs (both media) this sitting may run: {@code pairsThisSitting}, at most the whole matrix. */
        int pairsToRun() {
            return (int) Math.min(pairsThisSitting, (long) pairs * media.size());
        }

        /**
         * Wall time of this sitting at most (no pair loaded), excluding the build: per run start-up, warm-up,
         * measured rounds, checks.
         */
        public Duration expectedDuration() {
            long perRunMs = (warmup + rounds) * foregroundMs + (peerRestore ? 20_000 : 15_000);
            return Duration.ofMillis(perRunMs * 2L * pairsToRun());
        }
    }

    /**
     * One round's timings (harness monotonic clock) and what the restores were served from: {@code ssdServed} blocks
     * of the local restore from SSD, {@code peerServed} blocks of the peer restore from the data peer over TCP. An
     * operation the run does not time has start and end 0.
     */
    public record Round(int index, boolean warmup, long startNs, long[] opStartNs, long[] opEndNs, int ssdServed, int peerServed) {
        long latency(Op op) {
            return opEndNs[op.ordinal()] - opStartNs[op.ordinal()];
        }

        boolean measures(Op op) {
            return opStartNs[op.ordinal()] != 0 || opEndNs[op.ordinal()] != 0;
        }

        /** The end of the round's last timed operation. */
        long endNs() {
            return Arrays.stream(opEndNs).max().orElseThrow();
        }
    }

    /**
     * One run: its identity, rounds, validity and diagnostics, or its collection failure. A run loaded from a resume
     * directory has {@code recorded} (its validity as the sitting that ran it found it) and no diagnostics
     * ({@code validity} and {@code managerThreads} null).
     */
    public record RunResult(Medium medium, int pair, Arm arm, int order, List<Round> rounds, IsolationRules.Validity validity,
            ProcStat.ThreadDeltas managerThreads, Map<String, Double> processCores, long samplerPolls, long samplerBytes,
            double samplerCpuSeconds, long[] installOverlaps, long peerPublications, String failure, Recorded recorded) {
        /** What a loaded run keeps: where and when it was recorded, whether it was valid and the validity summary. */
        public record Recorded(String from, String at, boolean valid, String validitySummary) {}

        static RunResult failed(Medium medium, int pair, Arm arm, int order, String why) {
            return new RunResult(medium, pair, arm, order, List.of(), null, null, Map.of(), 0, 0, 0, new long[Op.values().length], 0, why, null);
        }

        static RunResult recorded(Medium medium, int pair, Arm arm, int order, List<Round> rounds, long peerPublications, Recorded recorded) {
            return new RunResult(medium, pair, arm, order, List.copyOf(rounds), null, null, Map.of(), 0, 0, 0, new long[Op.values().length],
                    peerPublications, null, recorded);
        }

        boolean failed() {
            return failure != null;
        }

        boolean loaded() {
            return recorded != null;
        }

        boolean valid() {
            return !failed() && (loaded() ? recorded.valid() : validity.valid());
        }

        String validitySummary() {
            return failed() ? "FAILED: " + failure : loaded() ? recorded.validitySummary() : validity.summary();
        }

        long[] measured(Op op) {
            return rounds.stream().filter(r -> !r.warmup()).mapToLong(r -> r.latency(op)).toArray();
        }

        String label() {
            return label(medium, pair, arm);
        }

        static String label(Medium medium, int pair, Arm arm) {
            return medium + "-pair" + (pair + 1) + "-" + arm.tag;
        }
    }

    /** The verdicts of one medium over its recorded pairs (baseline run first in each). */
    public record MediumResult(Medium medium, List<RunResult[]> pairs, Map<Op, IsolationRules.Verdict> verdicts) {}

    private final Settings settings;
    private final BenchRun run;
    private final EtcdFixture etcd;
    private final Path work;
    private final ContractVerdicts verdicts;
    private int runsStarted;

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

    /** Runs this harness launched (a resumed sitting launches none for a loaded pair). */
    public int runsStarted() {
        return runsStarted;
    }

    /**
     * Runs the matrix (pairs interleaved across media), loading the pairs a resume directory already holds; prints the
     * tables and verdicts (or the calibration's noise floor), writes raw files and plots.
     */
    public List<MediumResult> run() throws Exception {
        run.report((settings.calibrate() ? "isolation calibration, idle / idle (P6, PERF-3, issue 37 item 4): " : "isolation qualification (P6, PERF-3): ")
                + settings + (settings.qualifying() ? " [qualifying parameters]" : " [NOT qualifying parameters: a smoke or shortened run]")
                + "; at most " + settings.pairsToRun() + " new pairs this sitting, expected duration at most " + settings.expectedDuration().toMinutes()
                + " min; processes per run: the Manager, " + (settings.peerRestore() ? "the data peer Manager, " : "")
                + "the pressure peer JVM, this harness JVM, etcd; timed per round: " + settings.ops().stream().map(Op::text).toList());
        IsolationResume resume = settings.resumeDir().isEmpty() ? null : IsolationResume.open(Path.of(settings.resumeDir()), settings.fingerprint());
        if (resume != null) {
            run.report("resume directory " + resume.dir() + " (fingerprint [" + settings.fingerprint() + "]): recorded pairs "
                    + resume.recordedPairs());
        }
        Map<Medium, List<RunResult[]>> byMedium = new LinkedHashMap<>();
        settings.media().forEach(m -> byMedium.put(m, new ArrayList<>()));
        int fresh = 0;
        for (int p = 0; p < settings.pairs(); p++) {
            for (int mi = 0; mi < settings.media().size(); mi++) {
                Medium m = settings.media().get(mi);
                IsolationResume.Loaded loaded = resume == null ? null : resume.load(m, p);
                if (loaded != null) {
                    run.report(m + " pair " + (p + 1) + " loaded from " + resume.dir() + " (recorded " + loaded.recorded() + ")");
                    Arrays.stream(loaded.pair()).forEach(r -> run.report("  " + summary(r)));
                    byMedium.get(m).add(loaded.pair());
                } else if (fresh < settings.pairsThisSitting()) {
                    fresh++;
                    RunResult[] pair = runPair(m, p, 2 * (p * settings.media().size() + mi));
                    byMedium.get(m).add(pair);
                    keep(resume, pair);
                } else {
                    run.report(m + " pair " + (p + 1) + ": not run in this sitting (bench.isolation.pairsThisSitting=" + settings.pairsThisSitting() + ")");
                }
            }
        }
        List<MediumResult> out = new ArrayList<>();
        for (Map.Entry<Medium, List<RunResult[]>> e : byMedium.entrySet()) {
            out.add(verdicts(e.getKey(), e.getValue()));
        }
        report(out, resume);
        return out;
    }

    /** Both runs of one pair in its ABBA / BAAB order; the baseline (idle) run first in the result. */
    private RunResult[] runPair(Medium medium, int pair, int order) {
        boolean idleFirst = IsolationRules.idleFirst(pair);
        RunResult a = runOne(medium, pair, idleFirst ? Arm.IDLE : settings.treatment(), order);
        RunResult b = runOne(medium, pair, idleFirst ? settings.treatment() : Arm.IDLE, order + 1);
        return idleFirst ? new RunResult[] {a, b} : new RunResult[] {b, a};
    }

    /**
     * A collected pair goes to the resume directory; one with a collection failure does not (the next sitting runs it).
     * A pair that cannot be written is said so loudly and still counts in this sitting's verdicts: losing it from the
     * directory costs a later sitting a re-run, while ending this sitting here would lose every later pair's figures.
     */
    private void keep(IsolationResume resume, RunResult[] pair) {
        if (resume == null) {
            return;
        }
        if (pair[BASELINE].failed() || pair[TREATMENT].failed()) {
            run.report("  not kept in " + resume.dir() + ": a run failed collection (a later sitting runs this pair again)");
            return;
        }
        try {
            resume.store(pair);
            run.report("  kept in " + resume.dir().resolve(IsolationResume.pairName(pair[BASELINE].medium(), pair[BASELINE].pair())));
        } catch (IOException e) {
            run.report("  NOT KEPT in " + resume.dir() + " (a later sitting runs this pair again): " + e);
        }
    }

    // ------------------------------------------------------------------ one run

    private RunResult runOne(Medium medium, int pair, Arm arm, int order) {
        String label = RunResult.label(medium, pair, arm);
        run.report("run " + (order + 1) + ": " + label);
        runsStarted++;
        Path raw = run.dir().resolve("runs").resolve(label);
        try (RunProcesses procs = new RunProcesses()) {
            procs.start(medium, label, raw);
            ClockDomain.Domain domain = ClockDomain.check(List.of(procs.manager.pid(), procs.peer.pid()));
            RunResult r = collect(medium, pair, arm, order, raw, procs);
            ClockDomain.requireSameBoot(domain);
            procs.manager.sigterm();
            procs.manager.awaitExit(Duration.ofSeconds(30));
            run.report("  " + summary(r));
            return r;
        } catch (Throwable t) {
            String why = t.getClass().getSimpleName() + ": " + t.getMessage();
            run.report("  " + label + " FAILED COLLECTION (kept as a failed run): " + why);
            return RunResult.failed(medium, pair, arm, order, why);
        }
    }

    /** One run's processes and directories: fresh cluster, pressure peer, measured Manager, data peer; all gone at close. */
    private final class RunProcesses implements AutoCloseable {
        private Path tmp;
        private Path shm;
        private Path dataShm;
        private Peer peer;
        private ManagerProcess manager;
        private ManagerProcess dataPeer;

        void start(Medium medium, String label, Path raw) throws IOException {
            Files.createDirectories(raw);
            tmp = Files.createTempDirectory(work, "iso-");
            shm = Files.createTempDirectory(shmRoot(), "orbitkv-iso-");
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
            List<String> args = managerArgs(cluster, "manager", shm);
            if (medium == Medium.SSD) {
                args.addAll(List.of("--ssd-dir", Files.createDirectories(tmp.resolve("ssd")).toString(), "--ssd", "512MiB"));
            }
            manager = ManagerProcess.launchAsImage("manager-" + label, raw.resolve("logs"), args);
            if (settings.peerRestore()) { // launched like the measured Manager, DRAM only; both start before either is awaited
                dataShm = Files.createTempDirectory(shmRoot(), "orbitkv-iso-data-");
                dataPeer = ManagerProcess.launchAsImage(IsolationPeerForeground.NODE + "-" + label, raw.resolve("logs"),
                        managerArgs(cluster, IsolationPeerForeground.NODE, dataShm));
            }
            manager.awaitReady();
            if (dataPeer != null) {
                dataPeer.awaitReady();
            }
        }

        private List<String> managerArgs(String cluster, String node, Path dramDir) {
            return new ArrayList<>(List.of("manager", "--cluster", cluster, "--node-id", node, "--etcd", etcd.endpoints().toString(),
                    "--http-listen", "127.0.0.1:0", "--peer-listen", "127.0.0.1:0", "--dram", "256MiB", "--dram-dir", dramDir.toString(),
                    "--block-bytes-max", "1MiB"));
        }

        private static Path shmRoot() {
            return Path.of(Files.isDirectory(Path.of("/dev/shm")) ? "/dev/shm" : System.getProperty("java.io.tmpdir"));
        }

        @Override
        public void close() {
            if (peer != null) {
                peer.close();
            }
            if (manager != null) {
                manager.close();
            }
            if (dataPeer != null) {
                dataPeer.close();
            }
            try {
                ManagerProcess.deleteTree(tmp);
                ManagerProcess.deleteTree(shm);
                ManagerProcess.deleteTree(dataShm);
            } catch (IOException e) {
                run.report("  cleanup of " + tmp + " / " + shm + " / " + dataShm + " failed: " + e);
            }
        }
    }

    /** What the measured interval needs from one moment: thread and process samples, the observer's counters, metrics. */
    private record Snapshot(Map<Integer, ProcStat.ThreadSample> threads, Map<String, ProcStat.ProcessSample> processes, long polls, long bytes,
            long samplerCpuNanos, String metrics) {}

    /** The rounds of one run and the measured interval {@code [start, end]} with its snapshots. */
    private record Window(List<Round> rounds, long start, long end, Snapshot before, Snapshot after) {}

    private RunResult collect(Medium medium, int pair, Arm arm, int order, Path raw, RunProcesses procs) throws Exception {
        ManagerApi api = new ManagerApi(procs.manager.httpBase());
        String peerInc = procs.peer.incarnation();
        long peerHead = procs.peer.readyHead();
        List<IsolationRules.ObserverPoll> polls = new ArrayList<>();
        try (StatusSampler sampler = observer(procs.manager.httpBase(), peerInc, polls)) {
            sampler.await(peerInc, r -> "INSTALLED".equals(r.state()) && r.installedSequence() >= peerHead, BOUND,
                    "the Manager's installed view of the peer at " + peerHead);
            IsolationPeerForeground peerFg = procs.dataPeer == null ? null
                    : IsolationPeerForeground.ready(api, procs.manager.incarnation(), new ManagerApi(procs.dataPeer.httpBase()),
                            procs.dataPeer.incarnation(), settings.blocks(), settings.blockBytes(), BOUND);
            if (arm == Arm.PRESSURE) {
                procs.peer.command("start", "pressure-peer started");
            }
            Window w = measure(api, medium, procs, sampler, peerFg);

            // The peer stops (every arm); the Manager must install exactly its final head; then key by key.
            long head = Long.parseLong(procs.peer.command("stop", "pressure-peer stopped").replaceAll(".*head=(\\d+).*", "$1"));
            StatusSampler.Row last = sampler.await(peerInc, r -> r.installedSequence() >= head, BOUND, "the peer's final head " + head);
            if (arm == Arm.PRESSURE && last.installedSequence() != head) {
                throw new VisibilityHarness.CollectionFailed("the Manager installed " + last.installedSequence() + " past the peer's final head " + head);
            }
            checkFinalState(api, peerInc, raw.resolve("source-final-state.csv"));
            if (medium == Medium.SSD) {
                checkSsdReads(w);
            }
            List<IsolationRules.ObserverPoll> obs;
            synchronized (polls) {
                obs = new ArrayList<>(polls);
            }
            obs.sort(java.util.Comparator.comparingLong(IsolationRules.ObserverPoll::startNs)); // answers may overtake
            run.report(String.format(Locale.ROOT, "  observer of the %s %s run of pair %d: longest answer %.1f ms, %d ticks "
                    + "with %d answers outstanding (no poll started), %d reconnects", medium, arm, pair + 1,
                    sampler.maxAnswerNanos() / 1e6, sampler.skippedTicks(), StatusSampler.POLLS_IN_FLIGHT_MAX, sampler.reconnects()));
            return result(medium, pair, arm, order, raw, w, obs);
        }
    }

    /** The observer: every poll of the pressure peer's owner row goes to {@code polls} (bounded), in both arms. */
    private StatusSampler observer(String httpBase, String peerInc, List<IsolationRules.ObserverPoll> polls) {
        int pollsMax = (int) Math.min(Integer.MAX_VALUE - 8, (settings.warmup() + settings.rounds() + 30L) * settings.foregroundMs()
                / settings.observerMs() * 2 + 10_000);
        return new StatusSampler(httpBase, Duration.ofMillis(settings.observerMs()), p -> {
            for (JsonNode o : p.status().get("owners")) {
                if (o.at("/owner/incarnation").asText().equals(peerInc) && polls.size() < pollsMax) {
                    JsonNode inst = o.get("installed");
                    synchronized (polls) {
                        polls.add(new IsolationRules.ObserverPoll(p.startNs(), p.endNs(), inst.get("sequence").asLong(-1),
                                inst.get("mono_ns").asLong(-1)));
                    }
                }
            }
        });
    }

    /** Warm-up and measured rounds at the foreground cadence, with snapshots just before and after the measured ones. */
    private Window measure(ManagerApi api, Medium medium, RunProcesses procs, StatusSampler sampler, IsolationPeerForeground peerFg) {
        List<Round> rounds = new ArrayList<>();
        long period = TimeUnit.MILLISECONDS.toNanos(settings.foregroundMs());
        long t0 = System.nanoTime() + period;
        Snapshot before = null;
        long measuredStart = 0;
        for (int k = 0; k < settings.warmup() + settings.rounds(); k++) {
            long at = t0 + k * period;
            if (k == settings.warmup()) {
                parkUntil(at - 50_000_000L); // snapshot just before the first measured round
                before = snapshot(api, procs, sampler);
                measuredStart = at;
            }
            parkUntil(at);
            rounds.add(round(api, medium, peerFg, k, k < settings.warmup(), Math.max(at, System.nanoTime())));
        }
        return new Window(rounds, measuredStart, rounds.getLast().endNs(), before, snapshot(api, procs, sampler));
    }

    /** The declared foreground cadence, not a synchronization: parks until {@code deadline} (a park may return early). */
    private static void parkUntil(long deadline) {
        for (long w = deadline - System.nanoTime(); w > 0; w = deadline - System.nanoTime()) {
            LockSupport.parkNanos(w);
        }
    }

    private Snapshot snapshot(ManagerApi api, RunProcesses procs, StatusSampler sampler) {
        return new Snapshot(ProcStat.threads(procs.manager.pid()), processes(procs), sampler.polls(), sampler.responseBytes(),
                sampler.threadCpuNanos(), api.get("/metrics").text());
    }

    private void checkSsdReads(Window w) {
        double ssdReads = PromText.sum(w.after().metrics(), "orbitkv_tier_reads", Map.of("medium", "SSD"))
                - PromText.sum(w.before().metrics(), "orbitkv_tier_reads", Map.of("medium", "SSD"));
        long needed = (long) settings.rounds() * settings.blocks();
        if (ssdReads < needed) {
            throw new VisibilityHarness.CollectionFailed("SSD read counter rose by " + ssdReads + " over " + settings.rounds()
                    + " measured rounds of " + settings.blocks() + " blocks (needs >= " + needed + ")");
        }
    }

    /** The run's validity, diagnostics and raw files. */
    private RunResult result(Medium medium, int pair, Arm arm, int order, Path raw, Window w, List<IsolationRules.ObserverPoll> obs)
            throws IOException {
        List<IsolationRules.SourceTick> ticks = readTicks(raw.resolve("source-ticks.csv"));
        long period = TimeUnit.MILLISECONDS.toNanos(settings.foregroundMs());
        IsolationRules.Validity v = arm == Arm.PRESSURE
                ? IsolationRules.pressure(ticks, obs, w.start(), w.end(), TimeUnit.MILLISECONDS.toNanos(settings.sourceMs()), period)
                : IsolationRules.idle(ticks, obs, w.start(), w.end(), period);
        long pubs = ticks.stream().filter(t -> t.lastPublicationNs() >= 0).count();
        ProcStat.ThreadDeltas deltas = ProcStat.delta(w.before().threads(), w.after().threads());
        Map<String, Double> cores = new LinkedHashMap<>();
        for (Map.Entry<String, ProcStat.ProcessSample> e : w.after().processes().entrySet()) {
            cores.put(e.getKey(), e.getValue().coresBusySince(w.before().processes().get(e.getKey())));
        }
        RunResult r = new RunResult(medium, pair, arm, order, w.rounds(), v, deltas, cores, w.after().polls() - w.before().polls(),
                w.after().bytes() - w.before().bytes(), (w.after().samplerCpuNanos() - w.before().samplerCpuNanos()) / 1e9,
                overlaps(w.rounds(), obs, w.start(), w.end()), pubs, null, null);
        writeRaw(r, obs, deltas);
        return r;
    }

    private Map<String, ProcStat.ProcessSample> processes(RunProcesses procs) {
        Map<String, ProcStat.ProcessSample> m = new LinkedHashMap<>();
        m.put("manager", ProcStat.process(procs.manager.pid()));
        if (procs.dataPeer != null) {
            m.put("data-peer", ProcStat.process(procs.dataPeer.pid()));
        }
        m.put("peer", ProcStat.process(procs.peer.pid()));
        m.put("harness", ProcStat.process(ProcessHandle.current().pid()));
        m.put("etcd", ProcStat.process(etcd.member(0).pid()));
        return m;
    }

    /** One foreground round; every check failing throws (collection fails). */
    private Round round(ManagerApi api, Medium medium, IsolationPeerForeground peerFg, int k, boolean warm, long start) {
        long generation = k + 1L;
        int slot = k % KEY_PERIOD;
        Map<String, byte[]> blocks = new LinkedHashMap<>();
        List<String> keys = new ArrayList<>();
        for (int j = 0; j < settings.blocks(); j++) {
            String key = String.format("%016x%016x", slot, j);
            keys.add(key);
            blocks.put(key, ManagerApi.payload(generation, j, settings.blockBytes()));
        }
        long[] s = new long[Op.values().length];
        long[] e = new long[Op.values().length];
        s[Op.SAVE.ordinal()] = System.nanoTime();
        ManagerApi.Reply save = api.save(FOREGROUND_NS, blocks);
        e[Op.SAVE.ordinal()] = System.nanoTime();
        require(save.status() == 200 && save.json().get("saved").size() == keys.size(), k, "save", save);
        if (medium == Medium.SSD) {
            ManagerApi.Reply sync = api.sync();
            require(sync.status() == 200, k, "sync (SSD write-through)", sync);
            ManagerApi.Reply ev = api.evict(FOREGROUND_NS, keys, "DRAM");
            require(ev.status() == 200 && ev.json().get("evicted").asLong() == keys.size(), k, "evict DRAM", ev);
        }
        s[Op.QUERY.ordinal()] = System.nanoTime();
        // one timed query: a lean cross-check would double it, and the pressure arm moves the view between the two
        ManagerApi.Reply query = api.queryFullOnly(FOREGROUND_NS, keys);
        e[Op.QUERY.ordinal()] = System.nanoTime();
        checkQuery(k, medium, keys, query);
        s[Op.RESTORE.ordinal()] = System.nanoTime();
        ManagerApi.Reply restore = api.restore(FOREGROUND_NS, keys);
        e[Op.RESTORE.ordinal()] = System.nanoTime();
        int ssd = checkRestore(k, medium, generation, blocks, restore);
        int peerServed = 0;
        if (peerFg != null) {
            long[] t = peerFg.round(k, generation);
            s[Op.PEER_RESTORE.ordinal()] = t[0];
            e[Op.PEER_RESTORE.ordinal()] = t[1];
            peerServed = (int) t[2];
        }
        return new Round(k, warm, start, s, e, ssd, peerServed);
    }

    private static void checkQuery(int k, Medium medium, List<String> keys, ManagerApi.Reply query) {
        require(query.status() == 200, k, "query", query);
        JsonNode cands = query.json().get("candidates");
        for (int j = 0; j < keys.size(); j++) {
            boolean local = false;
            for (JsonNode rep : cands.get(j).get("replicas")) {
                local |= rep.get("local").asBoolean() && rep.get("medium").asText().equals(medium.name());
            }
            require(local, k, "query: no local " + medium + " replica of " + keys.get(j), query);
        }
    }

    /** Every byte and header of the local restore; in SSD runs every block from SSD. Returns the blocks SSD served. */
    private static int checkRestore(int k, Medium medium, long generation, Map<String, byte[]> blocks, ManagerApi.Reply restore) {
        List<String> keys = List.copyOf(blocks.keySet());
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
        return ssd;
    }

    /** A failed check of round {@code round}: collection fails with the reply's status and the start of its body. */
    static void require(boolean ok, int round, String what, ManagerApi.Reply r) {
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
        long[] out = new long[Op.values().length];
        for (Round r : rounds) {
            if (r.warmup()) {
                continue;
            }
            for (Op op : Op.values()) {
                if (!r.measures(op)) {
                    continue;
                }
                int i = Arrays.binarySearch(sorted, r.opStartNs()[op.ordinal()]);
                int at = i >= 0 ? i : -i - 1;
                if (at < sorted.length && sorted[at] <= r.opEndNs()[op.ordinal()]) {
                    out[op.ordinal()]++;
                }
            }
        }
        return out;
    }

    private void writeRaw(RunResult r, List<IsolationRules.ObserverPoll> polls, ProcStat.ThreadDeltas deltas) {
        List<String> rounds = IsolationResume.csv(r.rounds());
        run.csv("runs/" + r.label() + "/rounds.csv", rounds.getFirst(), rounds.subList(1, rounds.size()));
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
        boolean valid = pairs.stream().allMatch(p -> p[BASELINE].valid() && p[TREATMENT].valid());
        boolean collected = !pairs.isEmpty() && pairs.stream().noneMatch(p -> p[BASELINE].failed() || p[TREATMENT].failed());
        for (Op op : settings.ops()) {
            if (!collected) {
                continue;
            }
            double[] ratios = new double[pairs.size()];
            for (int i = 0; i < pairs.size(); i++) {
                RunResult[] p = pairs.get(i);
                ratios[i] = (double) IsolationRules.p99(p[TREATMENT].measured(op)) / IsolationRules.p99(p[BASELINE].measured(op));
            }
            v.put(op, IsolationRules.verdict(ratios, valid, settings.seed()));
        }
        return new MediumResult(medium, pairs, v);
    }

    private String summary(RunResult r) {
        StringBuilder b = new StringBuilder(r.label()).append(": ");
        for (Op op : settings.ops()) {
            Stats s = Stats.of(r.measured(op));
            b.append(String.format("%s p50 %.3f p99 %.3f max %.3f ms; ", op.text(), s.p50Ms(), s.p99Ms(), s.maxMs()));
        }
        if (r.loaded()) {
            return b.append("loaded from ").append(r.recorded().from()).append(" (recorded ").append(r.recorded().at()).append("): ")
                    .append(r.validitySummary()).toString();
        }
        ProcStat.Group t = r.managerThreads().total();
        b.append(String.format("manager threads: %d surviving, %d started, %d exited, cpu %.2f s, switches %d voluntary / %d involuntary, "
                + "run-queue wait %.1f ms%s; cores busy %s; observer %d polls, %,d B, sampler CPU %.2f s; install overlaps %s %s; "
                + "%s", r.managerThreads().surviving(), r.managerThreads().started(), r.managerThreads().exited(), t.cpuTicks() / ProcStat.TICKS_PER_SECOND,
                t.voluntary(), t.involuntary(), t.waitNanos() / 1e6, r.managerThreads().schedstat() ? "" : " (no schedstat)", fmt(r.processCores()),
                r.samplerPolls(), r.samplerBytes(), r.samplerCpuSeconds(), settings.ops().stream().map(Op::text).collect(Collectors.joining("/")),
                Arrays.toString(Arrays.copyOf(r.installOverlaps(), settings.ops().size())), r.validitySummary()));
        return b.toString();
    }

    private static String fmt(Map<String, Double> m) {
        StringBuilder b = new StringBuilder("{");
        m.forEach((k, v) -> b.append(b.length() > 1 ? ", " : "").append(k).append(String.format(" %.3f", v)));
        return b.append('}').toString();
    }

    private void report(List<MediumResult> results, IsolationResume resume) {
        if (settings.calibrate()) {
            run.report("Isolation calibration (idle / idle, issue 37 item 4): the statistic's noise floor on this machine, REPORTED and not judged: "
                    + "per-pair p99 ratio (second idle run / first), its geometric mean, and over " + IsolationRules.RESAMPLES + " resamples of "
                    + "pairs (seed " + settings.seed() + ") the two-sided 95 % interval (2.5 % and 97.5 % quantiles) and the one-sided 95 % "
                    + "upper bound the contract reads; max |ln ratio| of one pair" + (settings.qualifying() ? "" : " [NOT qualifying parameters]"));
        } else {
            run.report("Isolation verdicts (frozen: every per-run p99 ratio <= 1.05 and the 95 % bootstrap upper bound of the paired geometric-mean "
                    + "ratio <= 1.05; " + IsolationRules.RESAMPLES + " resamples of pairs, seed " + settings.seed() + ")"
                    + (settings.qualifying() ? "" : " [NOT qualifying parameters]"));
        }
        for (MediumResult m : results) {
            pairTable(m);
            boolean complete = m.pairs().size() >= settings.pairs();
            if (settings.calibrate()) {
                noiseFloor(m, complete);
            } else if (complete) {
                verdictRows(m);
            }
            if (!complete) {
                incomplete(m, resume);
            }
            plots(m);
        }
        run.report("  raw files (warm-up and measured rounds, observer polls, source ticks, thread deltas per run): " + run.dir());
    }

    private void pairTable(MediumResult m) {
        String base = Arm.IDLE.tag;
        String other = settings.treatment().tag;
        StringBuilder head = new StringBuilder("| " + m.medium() + " pair | order | run validity (" + base + " / " + other + ") |");
        StringBuilder rule = new StringBuilder("|---|---|---|");
        for (Op op : settings.ops()) {
            head.append(' ').append(op.text()).append(" p99 ms ").append(base).append(" / ").append(other).append(" | ratio |");
            rule.append("---|---|");
        }
        run.report(head.toString());
        run.report(rule.toString());
        for (RunResult[] p : m.pairs()) {
            RunResult a = p[BASELINE];
            RunResult b = p[TREATMENT];
            StringBuilder row = new StringBuilder(String.format("| %d%s | %s | %s / %s |", a.pair() + 1, a.loaded() ? " (loaded)" : "",
                    a.order() < b.order() ? "AB (" + base + " first)" : "BA (" + other + " first)", state(a), state(b)));
            for (Op op : settings.ops()) {
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
    }

    private String contract(Medium medium, Op op) {
        return settings.calibrate() ? String.format("PERF-3 calibration (idle / idle) noise floor %s %s p99", medium, op.text())
                : String.format("PERF-3 isolation %s %s p99, pressure / idle", medium, op.text());
    }

    private void verdictRows(MediumResult m) {
        for (Map.Entry<Op, IsolationRules.Verdict> e : m.verdicts().entrySet()) {
            IsolationRules.Verdict v = e.getValue();
            String threshold = "every per-run ratio and the bootstrap 95 % upper bound ≤ " + IsolationRules.RATIO_MAX;
            String spread = "per-run " + Arrays.toString(Arrays.stream(v.ratios()).map(x -> Math.round(x * 10000) / 10000.0).toArray());
            if (!v.everyRunValid()) {
                verdicts.collectionFailed(contract(m.medium(), e.getKey()), threshold, "an invalid run (polling or source gap); " + spread);
            } else {
                verdicts.check(contract(m.medium(), e.getKey()), threshold, String.format(Locale.ROOT, "upper bound %.4f, geometric mean %.4f",
                        v.upperBound(), v.geometricMean()), spread, v.pass());
            }
        }
        if (m.verdicts().isEmpty()) {
            verdicts.collectionFailed("PERF-3 isolation " + m.medium(), "≤ " + IsolationRules.RATIO_MAX, "a run failed (see above): no verdict");
        }
    }

    /**
     * The calibration's rows: REPORTED, never a verdict cell (the figures are what the contract's statistic reads when
     * nothing differs; whether the design's bound sits above them is for the note, with these figures).
     */
    private void noiseFloor(MediumResult m, boolean complete) {
        for (Map.Entry<Op, IsolationRules.Verdict> e : m.verdicts().entrySet()) {
            IsolationRules.NoiseFloor f = IsolationRules.noiseFloor(e.getValue().ratios(), settings.seed());
            double[] absLog = Arrays.stream(f.ratios()).map(r -> Math.round(Math.abs(Math.log(r)) * 10000) / 10000.0).toArray();
            run.report(String.format(Locale.ROOT, "REPORTED          %s%s: geometric mean %.4f, bootstrap 95 %% interval [%.4f, %.4f], one-sided "
                    + "95 %% upper bound %.4f, max |ln ratio| %.4f (ratio %.4f); per-run ratios %s, |ln ratio| %s; the smallest bound this floor "
                    + "allows %.2f (design bound %.2f, %s)%s", contract(m.medium(), e.getKey()), complete ? "" : " [" + m.pairs().size() + " of "
                    + settings.pairs() + " pairs]", f.geometricMean(), f.lower(), f.upper(), f.upperOneSided(), f.maxAbsLogRatio(),
                    Math.exp(f.maxAbsLogRatio()), Arrays.toString(Arrays.stream(f.ratios()).map(x -> Math.round(x * 10000) / 10000.0).toArray()),
                    Arrays.toString(absLog), f.allowedBound(), IsolationRules.RATIO_MAX, f.allowedBound() <= IsolationRules.RATIO_MAX
                            ? "at or above it" : "below it", e.getValue().everyRunValid() ? "" : " [an invalid run: see the runs above]"));
        }
        if (m.verdicts().isEmpty() && !m.pairs().isEmpty()) {
            run.report("calibration " + m.medium() + ": a run failed (see above): no noise floor");
        }
    }

    /** Fewer recorded pairs than the matrix has: every row of the medium is a collection failure saying how to go on. */
    private void incomplete(MediumResult m, IsolationResume resume) {
        String how = resume == null ? "no bench.isolation.resumeDir: this sitting's pairs are not kept"
                : "resume with -Dbench.isolation.resumeDir=" + resume.dir() + " and the same settings";
        for (Op op : settings.ops()) {
            verdicts.collectionFailed(contract(m.medium(), op), settings.calibrate() ? "reported over " + settings.pairs() + " pairs"
                    : "every per-run ratio and the bootstrap 95 % upper bound ≤ " + IsolationRules.RATIO_MAX,
                    m.pairs().size() + " of " + settings.pairs() + " pairs recorded; " + how);
        }
    }

    private static String state(RunResult r) {
        return r.failed() ? "FAILED" : r.valid() ? "valid" : "INVALID";
    }

    private void plots(MediumResult m) {
        Map<String, Map<String, Double>> ratios = new LinkedHashMap<>();
        for (Map.Entry<Op, IsolationRules.Verdict> e : m.verdicts().entrySet()) {
            Map<String, Double> byPair = new LinkedHashMap<>();
            double[] r = e.getValue().ratios();
            for (int i = 0; i < r.length; i++) {
                byPair.put("pair " + (m.pairs().get(i)[BASELINE].pair() + 1), r[i]);
            }
            byPair.put("GM", e.getValue().geometricMean());
            byPair.put("GM 95% UB", e.getValue().upperBound());
            ratios.put(e.getKey().text(), byPair);
        }
        String med = m.medium().name().toLowerCase(Locale.ROOT);
        String prefix = settings.calibrate() ? "isolation-calibration-" : "isolation-";
        Arm other = settings.treatment();
        if (!ratios.isEmpty()) {
            Plots.barsWithThreshold(run, prefix + "ratios-" + med + ".png", m.medium() + ": per-run p99 ratio " + other.tag + " / idle (PERF-3"
                    + (settings.calibrate() ? " calibration" : "") + ")", "p99 ratio", ratios, IsolationRules.RATIO_MAX, 0.5);
        }
        Map<String, long[]> cdf = new LinkedHashMap<>();
        for (Op op : settings.ops()) {
            for (int side : new int[] {BASELINE, TREATMENT}) {
                long[] all = m.pairs().stream().map(p -> p[side]).filter(r -> !r.failed()).flatMapToLong(r -> Arrays.stream(r.measured(op)))
                        .toArray();
                if (all.length > 0) {
                    cdf.put(op.text() + ", " + (side == BASELINE ? Arm.IDLE : other).label, all);
                }
            }
        }
        if (!cdf.isEmpty()) {
            Plots.cdf(run, prefix + "cdf-" + med + ".png", m.medium() + ": foreground latency, idle vs " + other.label + " (all measured rounds)", cdf);
        }
    }
}
