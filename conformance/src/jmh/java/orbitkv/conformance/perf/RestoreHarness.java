package orbitkv.conformance.perf;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
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
import java.util.UUID;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.ManagerApi;
import orbitkv.conformance.manager.ManagerProcess;
import orbitkv.membership.MembershipAdmin;
import orbitkv.testing.Await;
import orbitkv.testing.ContractVerdicts;

/**
 * Issue 24 item 1: restore and save end to end on Manager processes, each arm against a raw loopback HTTP server in
 * the same run. Two Managers from the image's module path with the image's JVM settings and one etcd: {@code s} holds
 * every case's blocks twice, once in DRAM (the DRAM set) and once on SSD only (the SSD set: saved, written through,
 * then evicted from DRAM); {@code r} holds nothing and restores the DRAM set from {@code s}. Arms per case:
 *
 * <ul>
 *   <li>{@link Arm#RAW}: {@link RawHttpServer} answers a request of the same size with prebuilt bytes equal to the
 *       expected restore body (the floor: one loopback HTTP exchange of that many bytes);</li>
 *   <li>{@link Arm#RELAY}: a second {@link RawHttpServer} fetches the same bytes from the first and then answers with
 *       them (the floor of a peer route: the payload crosses loopback twice, stored and forwarded, unverified);</li>
 *   <li>{@link Arm#LOCAL_DRAM} / {@link Arm#LOCAL_SSD}: {@code POST /cache/restore} at {@code s};</li>
 *   <li>{@link Arm#PEER_TCP} / {@link Arm#PEER_SHM}: {@code POST /cache/restore} at {@code r} with
 *       {@code transfer_backend} {@code tcp} / {@code shared-memory-preferred}.</li>
 * </ul>
 *
 * Save: {@link SaveArm#RAW_SINK} ({@link RawHttpServer}'s {@code /sink} reads and drops the body) against
 * {@link SaveArm#MANAGER} ({@code POST /cache/save} of the same framed body at {@code r}, which has no SSD tier, so no
 * write-through competes). Every arm uses the one {@link KeepAliveClient} (a keep-alive connection per server, a
 * preallocated buffer). Each round runs every arm of a case once, in forward order on even rounds and reversed on odd
 * ones (ABBA), so drift hits all arms alike; the ratio to raw is taken per round (raw time / arm time: the arm's
 * throughput as a fraction of raw) and reported as the median with min..max over rounds. Every restored byte is
 * compared with the expected body and every route header with the arm (a local arm served from a peer, or a peer arm
 * over the other backend, fails collection); a failed exchange fails the run after the report is written.
 * Peer TCP over TLS is not an arm: the data connections have no TLS yet (docs/transfer.md).
 */
public final class RestoreHarness {
    static final String NS = "restore";
    static final String SAVE_NS = "save";

    /** One restore arm. */
    public enum Arm {
        RAW("raw"), RELAY("raw-relay"), LOCAL_DRAM("local-dram"), LOCAL_SSD("local-ssd"), PEER_TCP("peer-dram+tcp"),
        PEER_SHM("peer-dram+shm");

        final String label;

        Arm(String label) {
            this.label = label;
        }
    }

    /** One save arm. */
    public enum SaveArm { RAW_SINK, MANAGER }

    /** {@code blocks} blocks of {@code blockBytes} each. */
    public record Case(int blocks, int blockBytes) {
        public Case {
            if (blocks < 1 || blocks > 128 || blockBytes < 16 || blockBytes > 16 << 20) {
                throw new IllegalArgumentException("a case is 1..128 blocks of 16 B..16 MiB, got " + blocks + " x " + blockBytes);
            }
        }

        long bytes() {
            return (long) blocks * blockBytes;
        }

        String label() {
            return blocks + " x " + (blockBytes % (1 << 20) == 0 ? (blockBytes >> 20) + " MiB"
                    : blockBytes % 1024 == 0 ? (blockBytes >> 10) + " KiB" : blockBytes + " B");
        }

        /** {@code NxBYTES}, e.g. {@code 16x1048576}. */
        static Case parse(String s) {
            String[] p = s.trim().split("x");
            return new Case(Integer.parseInt(p[0]), Integer.parseInt(p[1]));
        }
    }

    /**
     * @param cases the restore and save cases
     * @param warmupExchanges first, every arm of the smallest case is exchanged this many times back to back, not
     *     recorded: the per-request paths of the Managers (Netty, gRPC, protobuf, the planner) need thousands of
     *     requests before C2 has compiled them. Measured in the same two processes, 1 x 64 KiB from a peer: p50 8.6 ms
     *     over the first 1,500 requests, 5.2 / 3.1 / 2.0 / 1.5 / 1.0 ms over the next five 2,000, 0.8-1.1 ms after
     *     15,000; five rounds (the first default) measured a mostly interpreted Manager, 30 s (the second, 1,500-2,400
     *     exchanges) a half-compiled one
     * @param warmupCaseMs then every other case runs all its arms, round after round, for this long, not recorded
     *     (issue 37 item 5): with only the smallest case warmed, the formal sitting measured the Managers while C2
     *     compiled the multi-block paths, and that compilation slowed every case on 2 cores. 1 x 64 KiB beside
     *     16 x 64 KiB, under load (2026-12-05): peer TCP p50 3.68 ms after 5 warm-up rounds, 0.90 ms after 1,000
     *     (0.77-1.02 ms with the 1 x 64 KiB case alone); 16 x 64 KiB peer TCP 4.67 ms against 1.99 ms
     * @param warmupRounds then rounds of every case run first and not recorded
     * @param rounds measured rounds (each runs every arm of every case once)
     * @param flightRecording true: each Manager runs a JFR recording ({@code bench.restore.jfrSettings}, default
     *     {@code profile}; a {@code .jfc} path from {@code jfr configure} for finer events) dumped into the run
     *     directory as {@code <node>.jfr} when the harness stops it with SIGTERM at the end (the profile that
     *     explains a floor; it costs a few percent, so a recorded run's figures are not the formal ones), with the
     *     Managers' data-path events enabled and their stages over the measured rounds reported ({@link FlightStages})
     * @param managerArgs more Manager options for both Managers ({@code bench.restore.managerArgs}, space-separated,
     *     e.g. {@code --transfer-reads-per-connection-max 1}), printed in the report
     * @param sweepBytes before each case of every round, the harness writes this many bytes of its own memory
     *     ({@code bench.restore.sweepBytes}, 0 = none, at most 1 GiB): a control for the cold one-block premium
     *     (issue 37 item 5), which evicts caches the way a 16 x 4 MiB case does without touching the Managers' state
     */
    public record Settings(List<Case> cases, int warmupExchanges, long warmupCaseMs, int warmupRounds, int rounds,
            boolean flightRecording, List<String> managerArgs, long sweepBytes) {
        /** The largest {@link #sweepBytes}. */
        public static final long SWEEP_BYTES_MAX = 1L << 30;

        public Settings {
            cases = List.copyOf(cases);
            managerArgs = List.copyOf(managerArgs);
            if (cases.isEmpty() || warmupExchanges < 0 || warmupCaseMs < 0 || warmupRounds < 0 || rounds < 1
                    || sweepBytes < 0 || sweepBytes > SWEEP_BYTES_MAX) {
                throw new IllegalArgumentException("bad restore harness settings: " + cases + ", warm-up " + warmupRounds
                        + ", rounds " + rounds + ", sweep " + sweepBytes + " B (at most " + SWEEP_BYTES_MAX + ")");
            }
        }

        /** The formal cases of issue 24 item 1. */
        public static final String FORMAL_CASES = "1x65536,16x65536,128x65536,16x1048576,16x4194304";

        /** {@code bench.restore.NAME} system properties over the formal defaults. */
        public static Settings fromProperties() {
            return new Settings(Arrays.stream(System.getProperty("bench.restore.cases", FORMAL_CASES).split(","))
                    .map(Case::parse).toList(), Integer.getInteger("bench.restore.warmupExchanges", 15_000),
                    Long.getLong("bench.restore.warmupCaseMs", 20_000),
                    Integer.getInteger("bench.restore.warmup", 5),
                    Integer.getInteger("bench.restore.rounds", 30), Boolean.getBoolean("bench.restore.jfr"),
                    Arrays.stream(System.getProperty("bench.restore.managerArgs", "").trim().split("\\s+"))
                            .filter(a -> !a.isEmpty()).toList(), Long.getLong("bench.restore.sweepBytes", 0));
        }
    }

    /** Per case: each arm's nanoseconds per measured round (round order), and the save arms'. */
    public record Result(Map<Case, Map<Arm, long[]>> restore, Map<Case, Map<SaveArm, long[]>> save, String failure) {}

    private final Settings settings;
    private final BenchRun run;
    private final EtcdFixture etcd;
    private final Path work;
    private final ContractVerdicts verdicts;
    /** When the first measured round began (the flight recordings' stages are reported from here). */
    private java.time.Instant measuredFrom;

    public RestoreHarness(Settings settings, BenchRun run, EtcdFixture etcd, Path work) {
        this.settings = settings;
        this.run = run;
        this.etcd = etcd;
        this.work = work;
        this.verdicts = new ContractVerdicts("RestoreHarness", run::report);
    }

    /** This run's verdicts (issue 37 item 1); {@link ContractVerdicts#enforce()} is the caller's. */
    public ContractVerdicts verdicts() {
        return verdicts;
    }

    /** Runs every round, writes the report and the plot; a failed exchange is in {@link Result#failure()}. */
    public Result run() throws Exception {
        String cluster = "restore-" + UUID.randomUUID().toString().substring(0, 8);
        try (MembershipAdmin admin = MembershipAdmin.connect(etcd.endpoints(), cluster, 5_000)) {
            if (!(admin.format() instanceof MembershipAdmin.Formatted)) {
                throw new IllegalStateException("cluster " + cluster + " not formatted");
            }
        }
        run.report(String.format(Locale.ROOT, "host: %d cores, java %s; cases %s; warm-up %d exchanges of every arm of the smallest case, "
                + "%d ms of rounds of every other case, then %d warm-up + %d measured rounds, arms in ABBA order per round; one keep-alive client per server reading "
                + "into a preallocated buffer; Manager options added: %s; harness memory swept before each case: %d B",
                Runtime.getRuntime().availableProcessors(),
                Runtime.version(), settings.cases().stream().map(Case::label).toList(), settings.warmupExchanges(),
                settings.warmupCaseMs(), settings.warmupRounds(), settings.rounds(), settings.managerArgs().isEmpty() ? "none"
                        : String.join(" ", settings.managerArgs()), settings.sweepBytes()));
        List<ManagerProcess> started = new ArrayList<>();
        Map<Case, Map<Arm, long[]>> restore = new LinkedHashMap<>();
        Map<Case, Map<SaveArm, long[]>> save = new LinkedHashMap<>();
        String failure = null;
        try {
            ManagerProcess s = start(started, cluster, "s", List.of("--ssd-dir",
                    Files.createDirectories(work.resolve("s-ssd")).toString(), "--ssd", "1GiB"));
            ManagerProcess r = start(started, cluster, "r", List.of());
            List<byte[]> rawBodies = new ArrayList<>();
            List<Exchange> exchanges = new ArrayList<>();
            for (int c = 0; c < settings.cases().size(); c++) {
                Case k = settings.cases().get(c);
                Map<String, byte[]> dram = blocks(c, 0, k);
                Map<String, byte[]> ssd = blocks(c, 1, k);
                save(s, NS, dram);
                save(s, NS, ssd);
                rawBodies.add(ManagerApi.frame(dram));
                exchanges.add(new Exchange(k, c, dram, ssd));
            }
            ManagerApi sApi = new ManagerApi(s.httpBase());
            require(sApi.sync(), "sync at s (the SSD copies are written)");
            for (Exchange e : exchanges) {
                require(sApi.evict(NS, List.copyOf(e.ssd.keySet()), "DRAM"), "evict the SSD set from DRAM");
            }
            published(r, s);
            int responseMax = rawBodies.stream().mapToInt(b -> b.length).max().orElseThrow();
            try (RawHttpServer raw = new RawHttpServer(rawBodies);
                 RawHttpServer relay = new RawHttpServer(rawBodies, raw.address());
                 KeepAliveClient toRaw = new KeepAliveClient(raw.address(), responseMax);
                 KeepAliveClient toRelay = new KeepAliveClient(relay.address(), responseMax);
                 KeepAliveClient toS = new KeepAliveClient(address(s), responseMax);
                 KeepAliveClient toR = new KeepAliveClient(address(r), responseMax)) {
                Map<Arm, KeepAliveClient> clients = new EnumMap<>(Map.of(Arm.RAW, toRaw, Arm.RELAY, toRelay, Arm.LOCAL_DRAM, toS,
                        Arm.LOCAL_SSD, toS, Arm.PEER_TCP, toR, Arm.PEER_SHM, toR));
                for (Exchange e : exchanges) {
                    restore.put(e.k, new EnumMap<>(Arm.class));
                    save.put(e.k, new EnumMap<>(SaveArm.class));
                    for (Arm a : Arm.values()) {
                        restore.get(e.k).put(a, new long[settings.rounds()]);
                    }
                    for (SaveArm a : SaveArm.values()) {
                        save.get(e.k).put(a, new long[settings.rounds()]);
                    }
                }
                Exchange smallest = exchanges.stream().min(java.util.Comparator.comparingLong(e -> e.k.bytes())).orElseThrow();
                long warmStart = System.nanoTime();
                for (int w = 0; w < settings.warmupExchanges(); w++) {
                    for (Arm a : Arm.values()) {
                        smallest.restore(a, clients.get(a));
                    }
                    for (SaveArm a : SaveArm.values()) {
                        smallest.save(a, a == SaveArm.RAW_SINK ? toRaw : toR);
                    }
                }
                run.report(String.format(Locale.ROOT, "warm-up: %d exchanges of every arm of %s in %.1f s",
                        settings.warmupExchanges(), smallest.k.label(), (System.nanoTime() - warmStart) / 1e9));
                for (Exchange e : exchanges) {
                    if (e != smallest) {
                        warmUp(e, clients, toRaw, toR);
                    }
                }
                Runnable sweep = sweeper(settings.sweepBytes());
                for (int round = -settings.warmupRounds(); round < settings.rounds(); round++) {
                    if (round == 0) {
                        measuredFrom = java.time.Instant.now();
                    }
                    for (Exchange e : exchanges) {
                        sweep.run();
                        List<Arm> arms = new ArrayList<>(List.of(Arm.values()));
                        List<SaveArm> saveArms = new ArrayList<>(List.of(SaveArm.values()));
                        if (Math.floorMod(round, 2) == 1) {
                            java.util.Collections.reverse(arms);
                            java.util.Collections.reverse(saveArms);
                        }
                        for (Arm a : arms) {
                            long t = e.restore(a, clients.get(a));
                            if (round >= 0) {
                                restore.get(e.k).get(a)[round] = t;
                            }
                        }
                        for (SaveArm a : saveArms) {
                            long t = e.save(a, a == SaveArm.RAW_SINK ? toRaw : toR);
                            if (round >= 0) {
                                save.get(e.k).get(a)[round] = t;
                            }
                        }
                    }
                }
            }
        } catch (CollectionFailed f) {
            failure = f.getMessage();
            verdicts.collectionFailed("restore and save end to end, every exchange verified", "0 failed exchanges", failure);
        } finally {
            if (settings.flightRecording()) {
                stopForRecordings(started);
                reportStages(started);
            }
            started.forEach(ManagerProcess::close);
        }
        Result result = new Result(restore, save, failure);
        if (failure == null) {
            report(result);
        }
        return result;
    }

    /** A collection failure: a wrong status, a wrong route, a wrong byte. */
    static final class CollectionFailed extends Exception {
        CollectionFailed(String message) {
            super(message);
        }
    }

    /** One case's prebuilt requests and expected bodies. */
    private final class Exchange {
        final Case k;
        final Map<String, byte[]> dram;
        final Map<String, byte[]> ssd;
        final ByteBuffer expectedDram;
        final ByteBuffer expectedSsd;
        final Map<Arm, ByteBuffer> requests = new EnumMap<>(Arm.class);
        final ByteBuffer rawSave;
        final ByteBuffer managerSave;

        Exchange(Case k, int index, Map<String, byte[]> dram, Map<String, byte[]> ssd) {
            this.k = k;
            this.dram = dram;
            this.ssd = ssd;
            expectedDram = ByteBuffer.wrap(ManagerApi.frame(dram)).asReadOnlyBuffer();
            expectedSsd = ByteBuffer.wrap(ManagerApi.frame(ssd)).asReadOnlyBuffer();
            byte[] tcp = restoreJson(dram.keySet(), "tcp");
            requests.put(Arm.RAW, KeepAliveClient.request("POST", "/raw/" + index, "application/json", tcp));
            requests.put(Arm.RELAY, KeepAliveClient.request("POST", "/relay/" + index, "application/json", tcp));
            requests.put(Arm.LOCAL_DRAM, KeepAliveClient.request("POST", "/cache/restore", "application/json", tcp));
            requests.put(Arm.LOCAL_SSD, KeepAliveClient.request("POST", "/cache/restore", "application/json",
                    restoreJson(ssd.keySet(), "tcp")));
            requests.put(Arm.PEER_TCP, KeepAliveClient.request("POST", "/cache/restore", "application/json", tcp));
            requests.put(Arm.PEER_SHM, KeepAliveClient.request("POST", "/cache/restore", "application/json",
                    restoreJson(dram.keySet(), "shared-memory-preferred")));
            byte[] body = ManagerApi.frame(blocks(index, 2, k));
            rawSave = KeepAliveClient.request("POST", "/sink", ManagerApi.BLOCKS, body);
            managerSave = KeepAliveClient.request("POST", "/cache/save?namespace=" + SAVE_NS, ManagerApi.BLOCKS, body);
        }

        long restore(Arm arm, KeepAliveClient client) throws IOException, CollectionFailed {
            long t0 = System.nanoTime();
            KeepAliveClient.Response resp = client.exchange(requests.get(arm));
            long nanos = System.nanoTime() - t0;
            String where = arm.label + " " + k.label();
            if (resp.status() != 200) {
                throw new CollectionFailed(where + ": status " + resp.status());
            }
            if (arm != Arm.RAW && arm != Arm.RELAY) {
                String route = resp.headers().get("x-orbitkv-route");
                String want = "r=" + k.blocks() + " stop=complete routes=";
                if (route == null || !route.startsWith(want) || !servedBy(route.substring(want.length()), arm)) {
                    throw new CollectionFailed(where + ": route " + route);
                }
            }
            ByteBuffer expected = arm == Arm.LOCAL_SSD ? expectedSsd : expectedDram;
            ByteBuffer body = client.buffer().slice(resp.bodyOffset(), resp.bodyLength());
            int at = body.mismatch(expected.duplicate());
            if (at >= 0) {
                throw new CollectionFailed(where + ": body differs from the saved bytes at offset " + at + " (length "
                        + resp.bodyLength() + ", expected " + expected.remaining() + ")");
            }
            return nanos;
        }

        long save(SaveArm arm, KeepAliveClient client) throws IOException, CollectionFailed {
            long t0 = System.nanoTime();
            KeepAliveClient.Response resp = client.exchange(arm == SaveArm.RAW_SINK ? rawSave : managerSave);
            long nanos = System.nanoTime() - t0;
            if (resp.status() != 200) {
                throw new CollectionFailed("save " + arm + " " + k.label() + ": status " + resp.status() + " "
                        + StandardCharsets.UTF_8.decode(client.buffer().slice(resp.bodyOffset(), resp.bodyLength())));
            }
            return nanos;
        }
    }

    /** Every run of the route header is the arm's kind (and, for peers, its backend). */
    static boolean servedBy(String runs, Arm arm) {
        for (String run : runs.split(",(?![0-9])")) { // a range "[0,16)" holds a comma too
            boolean ok = switch (arm) {
                case RAW, RELAY -> false;
                case LOCAL_DRAM -> run.startsWith("local-dram[");
                case LOCAL_SSD -> run.startsWith("local-ssd[");
                case PEER_TCP -> run.startsWith("peer-dram@") && run.endsWith(":ready+tcp");
                case PEER_SHM -> run.startsWith("peer-dram@") && run.endsWith(":ready+shm");
            };
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private static byte[] restoreJson(java.util.Collection<String> keys, String backend) {
        return ("{\"namespace\": \"" + NS + "\", \"keys\": [" + String.join(", ", keys.stream().map(k -> "\"" + k + "\"").toList())
                + "], \"deadline_ms\": 30000, \"transfer_backend\": \"" + backend + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    /** Case {@code c}'s blocks of set {@code set} (0 DRAM, 1 SSD, 2 save), in key order. */
    static Map<String, byte[]> blocks(int c, int set, Case k) {
        Map<String, byte[]> out = new LinkedHashMap<>();
        for (int j = 0; j < k.blocks(); j++) {
            long id = 0xd0000000L + c * 1_000_000L + set * 10_000L + j;
            out.put(String.format("%064x", id), ManagerApi.payload(24 + set, id, k.blockBytes()));
        }
        return out;
    }

    // ------------------------------------------------------------------ report

    private void report(Result result) {
        run.report("");
        run.report("| case | arm | rounds | p50 ms | min..max ms | MB/s at p50 | throughput / raw (median of rounds; min..max) |");
        run.report("|---|---|---|---|---|---|---|");
        Map<String, Map<String, Double>> ratios = new LinkedHashMap<>();
        List<String> rows = new ArrayList<>();
        for (Map.Entry<Case, Map<Arm, long[]>> e : result.restore().entrySet()) {
            Case k = e.getKey();
            long[] raw = e.getValue().get(Arm.RAW);
            for (Arm a : Arm.values()) {
                long[] t = e.getValue().get(a);
                double[] r = perRound(raw, t);
                row(k, a.label, t, r);
                ratios.computeIfAbsent(a.label, x -> new LinkedHashMap<>()).put(k.label(), Stats.median(r));
                for (int i = 0; i < t.length; i++) {
                    rows.add(k.blocks() + "," + k.blockBytes() + "," + a.label + "," + i + "," + t[i]);
                }
            }
        }
        run.csv("restore-samples.csv", "blocks,block_bytes,arm,round,nanos", rows);
        run.report("");
        run.report("| save case | arm | rounds | p50 ms | min..max ms | MB/s at p50 | throughput / raw sink (median; min..max) |");
        run.report("|---|---|---|---|---|---|---|");
        for (Map.Entry<Case, Map<SaveArm, long[]>> e : result.save().entrySet()) {
            long[] raw = e.getValue().get(SaveArm.RAW_SINK);
            for (SaveArm a : SaveArm.values()) {
                long[] t = e.getValue().get(a);
                double[] r = perRound(raw, t);
                row(e.getKey(), a == SaveArm.RAW_SINK ? "raw sink" : "manager save", t, r);
                if (a == SaveArm.MANAGER) {
                    ratios.computeIfAbsent("save", x -> new LinkedHashMap<>()).put(e.getKey().label(), Stats.median(r));
                }
            }
        }
        run.report("");
        goals(result);
        Plots.bars(run, "restore-ratios.png", "Restore and save throughput as a fraction of raw loopback HTTP (median of rounds)",
                "throughput / raw", ratios);
    }

    private void row(Case k, String arm, long[] t, double[] ratio) {
        Stats s = Stats.of(t);
        run.report(String.format(Locale.ROOT, "| %s | %s | %d | %.3f | %.3f..%.3f | %.0f | %.3f (%.3f..%.3f) |", k.label(), arm, s.n(),
                s.p50Ms(), s.minMs(), s.maxMs(), k.bytes() / (s.p50Ms() / 1e3) / 1e6, Stats.median(ratio),
                Arrays.stream(ratio).min().orElse(Double.NaN), Arrays.stream(ratio).max().orElse(Double.NaN)));
    }

    /** Raw time / arm time per round: the arm's throughput as a fraction of raw in the same round. */
    static double[] perRound(long[] raw, long[] arm) {
        double[] r = new double[arm.length];
        for (int i = 0; i < arm.length; i++) {
            r[i] = (double) raw[i] / arm[i];
        }
        return r;
    }

    /**
     * The frozen contracts of docs/performance.md section 4 (issue 24, and issue 37's relay, Mooncake-margin and
     * one-block thresholds), judged through {@link ContractVerdicts}; the Bench enforces them.
     */
    private void goals(Result result) {
        Case m1 = new Case(16, 1 << 20);
        Case m4 = new Case(16, 4 << 20);
        for (Case k : List.of(m1, m4)) {
            goal(result, k, Arm.LOCAL_DRAM, Arm.RAW, 0.85, "issue 24");
            goal(result, k, Arm.PEER_TCP, Arm.RELAY, 0.75, "issue 37");
            goal(result, k, Arm.PEER_SHM, Arm.RELAY, 1.0, "issue 37");
        }
        double[][] mooncake = {{1, 64 << 10, 0.35}, {16, 64 << 10, 0.30}, {16, 1 << 20, 0.45}, {16, 4 << 20, 0.65}};
        for (double[] m : mooncake) { // Mooncake Store's own ratios 0.31 / 0.26 / 0.42 / 0.60 plus a margin
            goal(result, new Case((int) m[0], (int) m[1]), Arm.PEER_TCP, Arm.RAW, m[2], "issue 37, ahead of Mooncake");
        }
        goal(result, m1, Arm.PEER_TCP, Arm.RAW, 0.7, "issue 24");
        goal(result, m4, Arm.PEER_TCP, Arm.RAW, 0.7, "issue 24");
        goal(result, new Case(128, 64 << 10), Arm.PEER_TCP, Arm.RAW, 0.5, "issue 24");
        goal(result, m1, Arm.PEER_SHM, Arm.RAW, 0.85, "issue 24");
        for (Case k : result.restore().keySet()) { // the floor a peer route can reach: the same two crossings
            Map<Arm, long[]> byArm = result.restore().get(k);
            run.report(String.format(Locale.ROOT, "floor: %s peer TCP / raw relay %.3f, peer shm / raw relay %.3f, raw relay / raw %.3f "
                    + "(medians of per-round ratios)", k.label(), Stats.median(perRound(byArm.get(Arm.RELAY), byArm.get(Arm.PEER_TCP))),
                    Stats.median(perRound(byArm.get(Arm.RELAY), byArm.get(Arm.PEER_SHM))),
                    Stats.median(perRound(byArm.get(Arm.RAW), byArm.get(Arm.RELAY)))));
        }
        oneBlock(result.restore().get(new Case(1, 64 << 10)));
        Map<SaveArm, long[]> save = result.save().get(m1);
        if (save != null) {
            double[] r = perRound(save.get(SaveArm.RAW_SINK), save.get(SaveArm.MANAGER));
            verdicts.atLeast("save 16 x 1 MiB / raw upload sink (issue 24)", 0.7, Stats.median(r), "", spread(r));
        }
    }

    /** One 64 KiB block from a peer (issue 37): TCP p50 ≤ 1.0 ms and ≤ 1.5 × local; shared memory p50 ≤ 0.8 ms. */
    private void oneBlock(Map<Arm, long[]> single) {
        if (single == null) {
            return;
        }
        Stats local = Stats.of(single.get(Arm.LOCAL_DRAM));
        Stats tcp = Stats.of(single.get(Arm.PEER_TCP));
        Stats shm = Stats.of(single.get(Arm.PEER_SHM));
        verdicts.atMost("one 64 KiB block, peer TCP p50 (issue 37)", 1.0, tcp.p50Ms(), " ms", range(tcp));
        verdicts.atMost("one 64 KiB block, peer TCP p50 / local p50 (issue 37)", 1.5, tcp.p50Ms() / local.p50Ms(), "×",
                String.format(Locale.ROOT, "local p50 %.3f ms", local.p50Ms()));
        verdicts.atMost("one 64 KiB block, peer shared memory p50 (issue 37)", 0.8, shm.p50Ms(), " ms", range(shm));
    }

    private void goal(Result result, Case k, Arm arm, Arm base, double min, String source) {
        Map<Arm, long[]> byArm = result.restore().get(k);
        if (byArm == null) {
            return; // a case this run did not measure (bench.restore.cases): no verdict, not a pass
        }
        double[] r = perRound(byArm.get(base), byArm.get(arm));
        verdicts.atLeast(String.format(Locale.ROOT, "%s / %s, %s (%s)", arm.label, base.label, k.label(), source), min, Stats.median(r), "",
                spread(r));
    }

    private static String spread(double[] perRound) {
        return String.format(Locale.ROOT, "per round %.3f..%.3f", Arrays.stream(perRound).min().orElse(Double.NaN),
                Arrays.stream(perRound).max().orElse(Double.NaN));
    }

    private static String range(Stats s) {
        return String.format(Locale.ROOT, "min..max %.3f..%.3f ms", s.minMs(), s.maxMs());
    }

    /** Every arm of {@code e}, round after round, for {@code warmupCaseMs}; reported, not recorded. */
    private void warmUp(Exchange e, Map<Arm, KeepAliveClient> clients, KeepAliveClient toRaw, KeepAliveClient toR)
            throws IOException, CollectionFailed {
        long start = System.nanoTime();
        long end = start + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(settings.warmupCaseMs());
        int rounds = 0;
        while (System.nanoTime() - end < 0) {
            for (Arm a : Arm.values()) {
                e.restore(a, clients.get(a));
            }
            for (SaveArm a : SaveArm.values()) {
                e.save(a, a == SaveArm.RAW_SINK ? toRaw : toR);
            }
            rounds++;
        }
        run.report(String.format(Locale.ROOT, "warm-up: %d rounds of every arm of %s in %.1f s", rounds, e.k.label(),
                (System.nanoTime() - start) / 1e9));
    }

    // ------------------------------------------------------------------ Managers

    private ManagerProcess start(List<ManagerProcess> started, String cluster, String node, List<String> extra) throws IOException {
        Path dir = Files.createDirectories(work.resolve(node));
        List<String> args = new ArrayList<>(List.of("manager", "--cluster", cluster, "--node-id", node,
                "--etcd", etcd.endpoints().toString(), "--http-listen", "127.0.0.1:0", "--peer-listen", "127.0.0.1:0",
                "--dram", "768MiB", "--dram-dir", Files.createDirectories(dir.resolve("dram")).toString(),
                "--lease-ttl-ms", "4000", "--fence-safety-margin-ms", "1000", "--renewal-interval-ms", "500",
                "--etcd-call-timeout-ms", "1000", "--shutdown-drain-ms", "2000", "--idle-liveness-ms", "500"));
        args.addAll(extra);
        args.addAll(settings.managerArgs());
        List<String> jvm = settings.flightRecording() ? List.of("-XX:StartFlightRecording=settings="
                + System.getProperty("bench.restore.jfrSettings", "profile") + "," + FlightStages.ENABLE
                + ",dumponexit=true,filename=" + run.dir().resolve(node + ".jfr")) : List.of();
        ManagerProcess m = ManagerProcess.launchAsImage(node, run.dir().resolve("logs"), jvm, args);
        started.add(m);
        m.awaitReady();
        return m;
    }

    /** Writes {@code bytes} of a buffer allocated once, a cache line at a time (nothing when 0). */
    private static Runnable sweeper(long bytes) {
        if (bytes == 0) {
            return () -> { };
        }
        java.lang.foreign.MemorySegment buffer = java.lang.foreign.Arena.ofAuto().allocate(bytes, 64);
        long[] pass = {0};
        return () -> {
            byte v = (byte) ++pass[0];
            for (long at = 0; at < bytes; at += 64) {
                buffer.set(java.lang.foreign.ValueLayout.JAVA_BYTE, at, v);
            }
        };
    }

    /** SIGTERM and a bounded wait, so each recording is dumped on exit (a SIGKILL would lose it). */
    private void stopForRecordings(List<ManagerProcess> started) {
        for (ManagerProcess m : started) {
            m.sigterm();
        }
        for (ManagerProcess m : started) {
            try {
                m.awaitExit(Duration.ofSeconds(30));
                run.report("flight recording: " + run.dir().resolve(m.name() + ".jfr"));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (AssertionError e) {
                run.report("flight recording of " + m + " not dumped: " + e.getMessage());
            }
        }
    }

    /** Each recording's data-path stages over the measured rounds (issue 37 item 5), into the report. */
    private void reportStages(List<ManagerProcess> started) {
        if (measuredFrom == null) {
            return;
        }
        run.report("");
        run.report("stages over the measured rounds (flight-recorder events; HTTP at r mixes the peer TCP and shm arms):");
        for (ManagerProcess m : started) {
            Path jfr = run.dir().resolve(m.name() + ".jfr");
            try {
                FlightStages.summarize(m.name(), jfr, measuredFrom).forEach(run::report);
            } catch (IOException e) {
                run.report("stages of " + jfr + " not read: " + e.getMessage());
            }
        }
    }

    private static InetSocketAddress address(ManagerProcess m) {
        URI u = URI.create(m.httpBase());
        return new InetSocketAddress(u.getHost(), u.getPort());
    }

    private static void save(ManagerProcess m, String ns, Map<String, byte[]> blocks) {
        require(new ManagerApi(m.httpBase(), Duration.ofSeconds(60)).save(ns, blocks), m + " save");
    }

    private static void require(ManagerApi.Reply r, String what) {
        if (r.status() != 200) {
            throw new IllegalStateException(what + " answered " + r.status() + ": " + r.text());
        }
    }

    /** {@code requester}'s index holds everything {@code source} published (sync at the source, await its fence). */
    private static void published(ManagerProcess requester, ManagerProcess source) {
        ManagerApi req = new ManagerApi(requester.httpBase());
        Await.until(requester + " admits " + source, Duration.ofSeconds(30),
                () -> req.status().at("/membership/members").asInt() >= 2);
        ManagerApi.Reply sync = new ManagerApi(source.httpBase()).sync();
        require(sync, source + " sync");
        JsonNode fence = sync.json().get("inventory_fence");
        require(req.await(fence, req.status().at("/scope/digest").asText(), 20_000), requester + " await");
    }
}
