package orbitkv.conformance.perf;

import io.etcd.jetcd.Client;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import orbitkv.conformance.baseline.BaselineKeys;
import orbitkv.conformance.baseline.BlockObserver;
import orbitkv.conformance.baseline.EtcdBlockPublisher;
import orbitkv.conformance.baseline.SignalledSource;
import orbitkv.conformance.baseline.JetcdTxnPort;
import orbitkv.conformance.baseline.PublisherConfig;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.index.OwnerViewStatus;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySessionServer;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.InventorySubscriber;
import orbitkv.inventory.Medium;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipAdmin;
import orbitkv.membership.MembershipConfig;
import orbitkv.membership.NodeId;
import orbitkv.membership.Registrant;
import orbitkv.membership.RegistrationResult;
import orbitkv.testing.ContractVerdicts;

/**
 * The P1 comparison and the publisher/stream ablations (PERF-5, PERF-6; design <em>Performance acceptance and
 * ablations</em>, <em>Diagnostics</em>): N owners (16 for P1) publish the same seeded burst trace, and one observer
 * discovers it, through one of
 * <ul>
 *   <li>{@code streaming-full}: InventorySessions over real loopback gRPC (one server per owner, one subscriber) into a
 *       GlobalIndex subscribed to AllNamespaces;</li>
 *   <li>{@code streaming-scoped}: the same with the observer subscribed to one of the trace's namespaces;</li>
 *   <li>{@code streaming-coalescing-only}: the full-domain stream with the pure coalescing window (no immediate reads
 *       on an idle stream, {@code InventoryConfig.withImmediateReadsPerWindow(0)}: the stream before issue 37);</li>
 *   <li>{@code etcd-frozen}, {@code etcd-coalescing-0/2/5ms}: the etcd block publisher baseline (one key per residence,
 *       CAS cursor) per owner and the Watch-built observer;</li>
 * </ul>
 * and, in the same run against the same etcd process, {@code idle-control}: the same registered members and nothing
 * else. Every cell registers the owners and the observer with real etcd membership (leases, keep-alives, watch), so
 * the control is exactly the membership traffic that every mode carries (P2: streaming stays within ±5 % of it).
 *
 * <p>Processes: one JVM (this one) holds all owners, the observer and the publishers; one etcd process. Visibility
 * follows s2.10-performance-v2 as far as one process allows: the publication stamp is the source's (under the
 * inventory lock), the install stamp the GlobalIndex's own (OwnerViewStatus.installed, under the index lock) or the
 * etcd observer's (after the revision's rows are applied); each burst ends at a terminal sequence that must be
 * installed exactly (a superseded sample fails collection) before that owner's next burst. etcd load is read from
 * etcd's own {@code /metrics} at the edges of the measured window.
 */
public final class EtcdLoadHarness {
    /** The cells of one run. */
    public enum Mode {
        IDLE_CONTROL("idle-control"), STREAMING_FULL("streaming-full"), STREAMING_SCOPED("streaming-scoped"),
        STREAMING_COALESCING_ONLY("streaming-coalescing-only"), ETCD_FROZEN("etcd-frozen"), ETCD_COALESCING_0("etcd-coalescing-0ms"), ETCD_COALESCING_2("etcd-coalescing-2ms"),
        ETCD_COALESCING_5("etcd-coalescing-5ms");

        final String label;

        Mode(String label) {
            this.label = label;
        }

        boolean streaming() {
            return this == STREAMING_FULL || this == STREAMING_SCOPED || this == STREAMING_COALESCING_ONLY;
        }

        /** The owners' inventory configuration: the defaults, or the pure window for the coalescing-only arm. */
        InventoryConfig inventory() {
            InventoryConfig d = InventoryConfig.defaults();
            // bench.p1.immediateReads: the stream arms' immediate-read budget, for an ablation of the default (issue 37)
            int budget = Integer.getInteger("bench.p1.immediateReads", d.immediateReadsPerWindow());
            return d.withImmediateReadsPerWindow(this == STREAMING_COALESCING_ONLY ? 0 : budget);
        }

        boolean etcd() {
            return name().startsWith("ETCD_");
        }

        PublisherConfig publisher() {
            return switch (this) {
                case ETCD_FROZEN -> PublisherConfig.frozen();
                case ETCD_COALESCING_0 -> PublisherConfig.coalescing(0);
                case ETCD_COALESCING_2 -> PublisherConfig.coalescing(2);
                case ETCD_COALESCING_5 -> PublisherConfig.coalescing(5);
                default -> throw new IllegalStateException(this + " has no publisher");
            };
        }

        static Mode parse(String s) {
            for (Mode m : values()) {
                if (m.label.equals(s.strip())) {
                    return m;
                }
            }
            throw new IllegalArgumentException("unknown mode '" + s + "'");
        }
    }

    /**
     * One run's cell parameters (issue 19 reuses them: owners, residences, churn, cadence, namespaces).
     *
     * @param owners owners (sources)
     * @param residencesPerOwner residences loaded before measuring (bootstrap / initial publication excluded)
     * @param burst mutations per burst; the last is always a put in namespace 0, the scoped observer's namespace
     * @param repeatPercent share of a burst's puts that re-put one of the owner's hot residences
     * @param deletePercent share of a burst's mutations that delete a hot residence
     * @param cadenceMs per-owner burst cadence
     * @param namespaces namespaces of the trace
     * @param warmup warm-up samples per cell (at least, over all owners); the formal default, 3,200 (10 s at 16 owners
     *     and 50 ms), outlasts the JIT's compilation of the path: with 50 the first stream cell of a fresh JVM measured
     *     while C2 compiled it (issue 37: its p50 0.81 and 1.15 ms against 0.28–0.33 ms of the cells after it)
     * @param samples measured samples per cell (at least)
     * @param minSeconds a cell's measured window lasts at least this long (etcd rates need a window)
     * @param controlSeconds the idle control window
     */
    public record Settings(int owners, int residencesPerOwner, int burst, int repeatPercent, int deletePercent, long cadenceMs,
            int namespaces, int warmup, int samples, long minSeconds, long controlSeconds, List<Mode> modes) {
        public Settings {
            if (owners < 1 || residencesPerOwner < 0 || burst < 1 || repeatPercent < 0 || repeatPercent > 100 || deletePercent < 0
                    || deletePercent > 50 || cadenceMs < 1 || namespaces < 1 || warmup < 0 || samples < 1 || minSeconds < 0
                    || controlSeconds < 1) {
                throw new IllegalArgumentException("invalid etcd-load settings: " + this);
            }
            modes = List.copyOf(modes);
        }

        /** {@code bench.p1.*} properties; the defaults are the formal P1 cell. */
        public static Settings fromProperties() {
            List<Mode> modes = new ArrayList<>();
            for (String s : System.getProperty("bench.p1.modes",
                    "idle-control,streaming-full,streaming-scoped,streaming-coalescing-only,etcd-frozen,etcd-coalescing-0ms,etcd-coalescing-2ms,etcd-coalescing-5ms").split(",")) {
                modes.add(Mode.parse(s));
            }
            return new Settings(Integer.getInteger("bench.p1.owners", 16), Integer.getInteger("bench.p1.residences", 4096),
                    Integer.getInteger("bench.p1.burst", 16), Integer.getInteger("bench.p1.repeatPercent", 50),
                    Integer.getInteger("bench.p1.deletePercent", 10), Long.getLong("bench.p1.cadenceMs", 50),
                    Integer.getInteger("bench.p1.namespaces", 4), Integer.getInteger("bench.p1.warmup", 3200),
                    Integer.getInteger("bench.p1.samples", 1000), Long.getLong("bench.p1.minSeconds", 60),
                    Long.getLong("bench.p1.controlSeconds", 60), modes);
        }
    }

    /** etcd's own counters over a window, per second. */
    public record EtcdRates(double seconds, double messagesPerS, double callsPerS, double rxBytesPerS, double txBytesPerS,
            double walFsyncsPerS, double etcdCpuCoresBusy, Map<String, Double> messagesByMethodPerS) {}

    /** One cell. */
    public record Cell(Mode mode, long[] visibilityNs, EtcdRates etcd, double processCpuCoresBusy, long mutations,
            double streamBytesPerS, long transactions) {
        Stats stats() {
            return Stats.of(visibilityNs);
        }
    }

    private static final Duration BOUND = Duration.ofSeconds(60);
    private final Settings settings;
    private final BenchRun run;
    private final EtcdFixture etcd;
    private final ContractVerdicts verdicts;

    public EtcdLoadHarness(Settings settings, BenchRun run, EtcdFixture etcd) {
        this.settings = settings;
        this.run = run;
        this.etcd = etcd;
        this.verdicts = new ContractVerdicts("EtcdLoadHarness (P1/P2)", run::report);
    }

    /** P1's frozen threshold (issue 37; issue 15 froze 10×): streaming p99 at least this many times below the publisher's. */
    public static final double P1_RATIO_MIN = P1Figures.THRESHOLD;
    /** P2's frozen tolerance: each etcd load figure within this many percent of the idle membership-only control. */
    public static final double P2_DEVIATION_PERCENT_MAX = 5;

    /** The P1/P2 verdicts of this run ({@link ContractVerdicts#enforce()} is the caller's, after its own checks). */
    public ContractVerdicts verdicts() {
        return verdicts;
    }

    /** Runs every mode in order, prints the comparison and the P1/P2 verdicts, writes raw samples and plots. */
    public Map<Mode, Cell> run() throws Exception {
        run.report("etcd load and visibility, " + settings.owners() + " owners (1 JVM: owners, observer, publishers; 1 etcd process): "
                + settings);
        Map<Mode, Cell> cells = new EnumMap<>(Mode.class);
        for (Mode m : settings.modes()) {
            Cell c = m == Mode.IDLE_CONTROL ? control() : cell(m);
            cells.put(m, c);
            List<String> rows = new ArrayList<>();
            for (long v : c.visibilityNs()) {
                rows.add(Long.toString(v));
            }
            run.csv("p1-" + m.label + ".csv", "visibility_ns", rows);
            run.report("  " + m.label + " done: " + line(c));
        }
        report(cells);
        return cells;
    }

    // ------------------------------------------------------------------ the trace

    /** The deterministic burst trace of one owner: the same in every mode. */
    static final class Trace {
        final int owner;
        final Random random;
        final List<StateKey> hot = new ArrayList<>();
        final List<Namespace> namespaces;
        long fresh;

        Trace(int owner, List<Namespace> namespaces) {
            this.owner = owner;
            this.random = new Random(20261130L * 31 + owner);
            this.namespaces = namespaces;
        }

        StateKey key(Namespace ns, long i) {
            byte[] k = new byte[32];
            for (int b = 0; b < 8; b++) {
                k[b] = (byte) (i >>> (56 - 8 * b));
                k[8 + b] = (byte) (owner >>> (56 - 8 * b));
            }
            k[31] = (byte) ns.hashCode();
            return new StateKey(ns, k);
        }

        StateKey freshKey(Namespace ns) {
            StateKey k = key(ns, fresh++);
            if (hot.size() < 512) {
                hot.add(k);
            } else {
                hot.set(random.nextInt(hot.size()), k);
            }
            return k;
        }

        /** Applies one burst to {@code source}; returns the terminal record. */
        MutationResult.Recorded burst(InventorySource source, int size, int repeatPercent, int deletePercent) {
            for (int i = 0; i < size - 1; i++) {
                step(source, repeatPercent, deletePercent);
            }
            return terminal(source);
        }

        /** One non-terminal mutation of a burst (issue 19's constant updates spread them over the period). */
        void step(InventorySource source, int repeatPercent, int deletePercent) {
            Namespace ns = namespaces.get(random.nextInt(namespaces.size()));
            int r = random.nextInt(100);
            if (r < deletePercent && !hot.isEmpty()) {
                StateKey k = hot.get(random.nextInt(hot.size()));
                source.delete(k, Medium.DRAM);
            } else if (r < deletePercent + repeatPercent && !hot.isEmpty()) {
                source.put(hot.get(random.nextInt(hot.size())), Medium.DRAM, 4096 + random.nextInt(4096));
            } else {
                source.put(freshKey(ns), random.nextBoolean() ? Medium.DRAM : Medium.SSD, 4096 + random.nextInt(4096));
            }
        }

        /** The terminal mutation: a put in namespace 0, inside every scope the harness subscribes to. */
        MutationResult.Recorded terminal(InventorySource source) {
            return (MutationResult.Recorded) source.put(freshKey(namespaces.getFirst()), Medium.DRAM, 4096);
        }
    }

    private List<Namespace> namespaces() {
        List<Namespace> out = new ArrayList<>();
        for (int i = 0; i < settings.namespaces(); i++) {
            out.add(Namespace.utf8("bench/model-" + i + "/fp16"));
        }
        return out;
    }

    // ------------------------------------------------------------------ membership (every cell)

    /** Formats a fresh cluster and registers the owners and the observer with real etcd membership. */
    private final class Members implements AutoCloseable {
        final String cluster = "p1-" + UUID.randomUUID().toString().substring(0, 8);
        final List<Membership> owners = new ArrayList<>();
        Membership observer;

        Members(List<Integer> peerPorts) {
            EtcdEndpoints e = etcd.endpoints();
            try (MembershipAdmin admin = MembershipAdmin.connect(e, cluster, 5_000)) {
                if (!(admin.format() instanceof MembershipAdmin.Formatted)) {
                    throw new IllegalStateException("cannot format " + cluster);
                }
            }
            for (int i = 0; i < settings.owners(); i++) {
                owners.add(register("owner-" + i, peerPorts.get(i)));
            }
            observer = register("observer", 1);
        }

        private Membership register(String node, int peerPort) {
            RegistrationResult r = Membership.register(etcd.endpoints(), new Registrant(cluster, new NodeId(node),
                    new Endpoint("127.0.0.1", peerPort), new Endpoint("127.0.0.1", 1)), MembershipConfig.defaults());
            if (!(r instanceof RegistrationResult.Registered reg)) {
                throw new IllegalStateException("registration of " + node + " failed: " + r);
            }
            return reg.membership();
        }

        @Override
        public void close() {
            owners.forEach(Membership::close);
            if (observer != null) {
                observer.close();
            }
        }
    }

    private Cell control() throws Exception {
        List<Integer> ports = Collections.nCopies(settings.owners(), 1);
        try (Members members = new Members(ports)) {
            Await.sleepCadence(Duration.ofSeconds(3)); // let registration and watch-creation traffic pass
            Scrape a = scrape();
            long cpu0 = processCpuNanos();
            Await.sleepCadence(Duration.ofSeconds(settings.controlSeconds()));
            Scrape b = scrape();
            double secs = (b.nanos - a.nanos) / 1e9;
            return new Cell(Mode.IDLE_CONTROL, new long[0], rates(a, b), (processCpuNanos() - cpu0) / 1e9 / secs, 0, 0, 0);
        }
    }

    // ------------------------------------------------------------------ a measured cell

    /** Owners, observer and (for etcd modes) publishers of one cell. */
    private interface Discovery extends AutoCloseable {
        /** The observer's latest install stamp of owner {@code i}: {sequence, monoNanos}. */
        long[] installed(int i);

        /** A reason the cell cannot continue, if any. */
        Optional<String> failure();

        long transactions();

        double streamBytes();

        @Override
        void close() throws Exception;
    }

    private Cell cell(Mode mode) throws Exception {
        List<Namespace> namespaces = namespaces();
        List<SignalledSource> sources = new ArrayList<>();
        List<Trace> traces = new ArrayList<>();
        for (int i = 0; i < settings.owners(); i++) {
            SignalledSource s = SignalledSource.create(mode.inventory());
            Trace t = new Trace(i, namespaces);
            for (int r = 0; r < settings.residencesPerOwner(); r++) {
                s.put(t.freshKey(namespaces.get(r % namespaces.size())), r % 2 == 0 ? Medium.DRAM : Medium.SSD, 4096);
            }
            sources.add(s);
            traces.add(t);
        }
        try (Discovery d = mode.streaming() ? new Streaming(mode, sources, namespaces) : new EtcdBaseline(mode, sources)) {
            for (int i = 0; i < sources.size(); i++) {
                long head = sources.get(i).headSequence();
                int owner = i;
                Await.until(mode.label + ": observer installed owner " + i + " at " + head, BOUND,
                        () -> d.failure().isEmpty() ? d.installed(owner)[0] >= head : fail(d.failure().get()));
            }
            int warmPerOwner = (settings.warmup() + settings.owners() - 1) / settings.owners();
            int measuredPerOwner = (settings.samples() + settings.owners() - 1) / settings.owners();
            List<long[]> perOwner = Collections.synchronizedList(new ArrayList<>());
            long[] window = new long[2];
            Scrape[] scrapes = new Scrape[2];
            long[] cpu = new long[2];
            double[] streamBytes = new double[2];
            long[] txns = new long[2];
            long[] mutations = new long[2];
            java.util.concurrent.CyclicBarrier warmDone = new java.util.concurrent.CyclicBarrier(settings.owners(), () -> {
                scrapes[0] = scrape();
                cpu[0] = processCpuNanos();
                streamBytes[0] = d.streamBytes();
                txns[0] = d.transactions();
                mutations[0] = sources.stream().mapToLong(InventorySource::headSequence).sum();
                window[0] = System.nanoTime();
            });
            long minNanos = TimeUnit.SECONDS.toNanos(settings.minSeconds());
            List<long[]> slow = Collections.synchronizedList(new ArrayList<>()); // {publication, install} of samples >= 1 ms
            GcPauses gc = new GcPauses();
            ExecutorService pool = Executors.newFixedThreadPool(settings.owners());
            try {
                List<Future<long[]>> loops = new ArrayList<>();
                for (int i = 0; i < settings.owners(); i++) {
                    int owner = i;
                    loops.add(pool.submit(() -> {
                        long[] out = new long[measuredPerOwner * 64];
                        int n = 0;
                        long phase = phaseNanos(owner);
                        long next = System.nanoTime() + phase;
                        for (int k = 0; ; k++) {
                            if (k == warmPerOwner) {
                                warmDone.await(BOUND.toSeconds(), TimeUnit.SECONDS);
                                next = System.nanoTime() + phase; // the barrier released every owner at once
                            }
                            if (k >= warmPerOwner && n >= measuredPerOwner && System.nanoTime() - window[0] >= minNanos) {
                                break;
                            }
                            MutationResult.Recorded t = traces.get(owner).burst(sources.get(owner), settings.burst(),
                                    settings.repeatPercent(), settings.deletePercent());
                            long terminal = t.sequence();
                            long[] inst = awaitInstalled(d, owner, terminal, mode);
                            if (k >= warmPerOwner && n < out.length) {
                                out[n++] = inst[1] - t.publishedMonoNanos();
                                if (out[n - 1] >= SLOW_SAMPLE_NANOS) {
                                    slow.add(new long[] {t.publishedMonoNanos(), inst[1]});
                                }
                            }
                            next += TimeUnit.MILLISECONDS.toNanos(settings.cadenceMs());
                            long wait = next - System.nanoTime();
                            if (wait > 0) {
                                LockSupport.parkNanos(wait); // the declared per-owner cadence, not a synchronization
                            } else {
                                next = System.nanoTime();
                            }
                        }
                        return java.util.Arrays.copyOf(out, n);
                    }));
                }
                for (Future<long[]> f : loops) {
                    perOwner.add(f.get(2, TimeUnit.HOURS));
                }
            } finally {
                pool.shutdownNow();
                gc.close();
            }
            window[1] = System.nanoTime();
            scrapes[1] = scrape();
            cpu[1] = processCpuNanos();
            streamBytes[1] = d.streamBytes();
            txns[1] = d.transactions();
            mutations[1] = sources.stream().mapToLong(InventorySource::headSequence).sum();
            double secs = (window[1] - window[0]) / 1e9;
            if (mode.streaming()) {
                run.report("  " + mode.label + " " + intentionalWait(sources));
            }
            long[] all = perOwner.stream().flatMapToLong(java.util.Arrays::stream).toArray();
            run.report("  " + mode.label + " " + tailAttribution(all, slow, gc, window));
            return new Cell(mode, all, rates(scrapes[0], scrapes[1]), (cpu[1] - cpu[0]) / 1e9 / secs, mutations[1] - mutations[0],
                    (streamBytes[1] - streamBytes[0]) / secs, txns[1] - txns[0]);
        }
    }

    /**
     * The owner's burst phase: 0 for every owner (the formal trace: all owners burst together each cadence), or with
     * {@code bench.p1.stagger=true} (an ablation, never the formal cell) owner {@code i} bursts {@code i / owners} of
     * a cadence later, which separates the queueing of simultaneous bursts from the per-burst path.
     */
    private long phaseNanos(int owner) {
        return Boolean.getBoolean("bench.p1.stagger") ? TimeUnit.MILLISECONDS.toNanos(settings.cadenceMs()) * owner / settings.owners() : 0;
    }

    /** Samples at or above 1 ms are kept with their end points for {@link #tailAttribution}. */
    private static final long SLOW_SAMPLE_NANOS = 1_000_000L;

    /**
     * Where the tail goes (issue 37): of the samples at or above the cell's p99, how many overlapped one of this JVM's
     * GC pauses (every owner, the observer and the stream share the harness JVM), and the pauses of the window.
     */
    private static String tailAttribution(long[] all, List<long[]> slow, GcPauses gc, long[] window) {
        if (all.length == 0) {
            return "tail: no samples";
        }
        long[] sorted = all.clone();
        java.util.Arrays.sort(sorted);
        long p99 = Stats.rank(sorted, 0.99);
        int tail = 0;
        int inPause = 0;
        synchronized (slow) {
            for (long[] x : slow) {
                if (x[1] - x[0] >= p99) {
                    tail++;
                    inPause += gc.overlaps(x[0], x[1]) ? 1 : 0;
                }
            }
        }
        long[] w = gc.within(window[0], window[1]);
        return String.format("tail: %d samples at or above p99 %.3f ms, %d of them overlapping a GC pause of this JVM (within %d ms); "
                + "GC pauses in the measured window: %d, summed %.1f ms, longest %.1f ms%s", tail, p99 / 1e6, inPause,
                GcPauses.SLACK_NANOS / 1_000_000, w[0], w[1] / 1e6, w[2] / 1e6, gc.dropped() > 0 ? " (" + gc.dropped() + " pauses not kept)" : "");
    }

    /** DIAG-3: the owners' intentional coalescing wait, apart from transport (issue 37: where the stream's time goes). */
    private static String intentionalWait(List<SignalledSource> sources) {
        double[] bounds = sources.getFirst().intentionalWaitSeconds().upperBoundsSeconds();
        long[] counts = new long[bounds.length];
        double sum = 0;
        for (SignalledSource s : sources) {
            orbitkv.inventory.SecondsHistogram h = s.intentionalWaitSeconds();
            sum += h.sumSeconds();
            for (int i = 0; i < counts.length; i++) {
                counts[i] += h.counts()[i];
            }
        }
        long n = java.util.Arrays.stream(counts).sum();
        StringBuilder b = new StringBuilder(String.format("intentional wait (all owners, warm-up included): %,d window openings, mean %.3f ms;"
                + " openings per bucket", n, n == 0 ? 0 : 1e3 * sum / n));
        for (int i = 0; i < counts.length; i++) {
            b.append(String.format(" <=%s %,d", Double.isInfinite(bounds[i]) ? "inf" : bounds[i] * 1e3 + "ms", counts[i]));
        }
        return b.toString();
    }

    private static boolean fail(String why) {
        throw new IllegalStateException(why);
    }

    /** Waits for the exact terminal install; a superseded sequence fails collection. Returns {sequence, monoNanos}. */
    private static long[] awaitInstalled(Discovery d, int owner, long terminal, Mode mode) {
        long[][] got = new long[1][];
        Await.until(mode.label + " owner " + owner + " installs " + terminal, BOUND, () -> {
            if (d.failure().isPresent()) {
                throw new IllegalStateException(d.failure().get());
            }
            got[0] = d.installed(owner);
            return got[0][0] >= terminal;
        });
        if (got[0][0] != terminal) {
            throw new IllegalStateException(mode.label + " owner " + owner + ": installed " + got[0][0] + " past terminal " + terminal
                    + " (a superseded sample fails collection)");
        }
        return got[0];
    }

    /** InventorySessions over loopback gRPC into one GlobalIndex. */
    private final class Streaming implements Discovery {
        final List<Server> servers = new ArrayList<>();
        final List<InventorySessionServer> sessionServers = new ArrayList<>();
        final List<ManagedChannel> channels = Collections.synchronizedList(new ArrayList<>());
        final Members members;
        volatile GlobalIndex index;
        final InventorySubscriber subscriber;
        final List<Incarnation> ownerIds = new ArrayList<>();

        Streaming(Mode mode, List<SignalledSource> sources, List<Namespace> namespaces) throws Exception {
            List<Integer> ports = new ArrayList<>();
            // gRPC servers first (their ports go into the member records), then registration, then the session servers.
            List<io.grpc.util.MutableHandlerRegistry> registries = new ArrayList<>();
            for (int i = 0; i < sources.size(); i++) {
                io.grpc.util.MutableHandlerRegistry reg = new io.grpc.util.MutableHandlerRegistry();
                Server s = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).fallbackHandlerRegistry(reg).build().start();
                servers.add(s);
                registries.add(reg);
                ports.add(s.getPort());
            }
            members = new Members(ports);
            for (int i = 0; i < sources.size(); i++) {
                Membership m = members.owners.get(i);
                InventorySessionServer server = InventorySessionServer.create(sources.get(i).unwrapped(), m.cluster(), m.incarnation(), m::view,
                        SessionConfig.defaults());
                registries.get(i).addService(server.bindableService());
                m.addListener(e -> server.onMembership(m.view()));
                sessionServers.add(server);
                ownerIds.add(m.incarnation());
            }
            Membership obs = members.observer;
            Scope scope = mode == Mode.STREAMING_SCOPED ? Scope.of(List.of(namespaces.getFirst())) : Scope.all();
            index = GlobalIndex.create(obs.incarnation(), scope, IndexConfig.defaults().withIndexBytesMax(1L << 30), System::nanoTime,
                    Runnable::run);
            subscriber = InventorySubscriber.create(obs.cluster(), obs.incarnation(), scope, index, e -> {
                ManagedChannel c = NettyChannelBuilder.forAddress(e.host(), e.port()).usePlaintext().build();
                channels.add(c);
                return c;
            }, SessionConfig.defaults());
            obs.addListener(e -> {
                index.onMembership(obs.view());
                subscriber.onMembership(obs.view());
            });
        }

        /**
         * The index's own install stamps, refreshed by one sampler thread (the stamps are the index's, not the poll's,
         * so the poll period bounds only how soon an owner starts its next burst, never a sample). The sampler keys
         * owners by incarnation and polls every {@link #SAMPLER_POLL_NANOS} (each owner looks at the stamps every
         * {@code Await.POLL}, 20 ms, before its next burst): an observer that polled every 0.5 ms and
         * rendered each incarnation as a string made a third of the stream arm's garbage and its own GC pauses
         * (issue 37, JFR allocation profile), a cost the frozen publisher's event-driven watch never paid.
         */
        private final Map<Incarnation, long[]> stamps = new java.util.concurrent.ConcurrentHashMap<>();
        private volatile boolean sampling = true;
        private final Thread sampler = Thread.ofPlatform().daemon(true).name("p1-index-sampler").start(() -> {
            while (sampling) {
                Optional<String> token = Optional.empty();
                do {
                    orbitkv.index.StatusPage page = indexRef().ownerStatus(256, token);
                    for (OwnerViewStatus s : page.owners()) {
                        long[] was = stamps.get(s.owner());
                        if (was == null || was[0] != s.installedSequence()) {
                            stamps.put(s.owner(), new long[] {s.installedSequence(), s.installedMonoNanos()});
                        }
                    }
                    token = page.nextPageToken();
                } while (token.isPresent());
                LockSupport.parkNanos(SAMPLER_POLL_NANOS);
            }
        });

        private static final long SAMPLER_POLL_NANOS = 2_000_000L;
        private static final long[] NOT_INSTALLED = {-1, -1};

        private GlobalIndex indexRef() {
            GlobalIndex g = index;
            while (g == null) {
                LockSupport.parkNanos(1_000_000);
                g = index;
            }
            return g;
        }

        @Override
        public long[] installed(int i) {
            return stamps.getOrDefault(ownerIds.get(i), NOT_INSTALLED);
        }

        @Override
        public Optional<String> failure() {
            return Optional.empty();
        }

        @Override
        public long transactions() {
            return 0;
        }

        @Override
        public double streamBytes() {
            double sum = 0;
            for (InventorySessionServer s : sessionServers) {
                sum += s.metrics().encodedBytes();
            }
            return sum;
        }

        @Override
        public void close() throws Exception {
            sampling = false;
            sampler.join(5_000);
            subscriber.close();
            sessionServers.forEach(InventorySessionServer::close);
            synchronized (channels) {
                channels.forEach(ManagedChannel::shutdownNow);
            }
            for (Server s : servers) {
                s.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            members.close();
        }
    }

    /** The etcd block publisher per owner and the Watch-built observer. */
    private final class EtcdBaseline implements Discovery {
        final Members members;
        final List<Client> clients = new ArrayList<>();
        final List<EtcdBlockPublisher> publishers = new ArrayList<>();
        final BlockObserver observer;
        final Client observerClient;
        final List<String> ownerIds = new ArrayList<>();

        EtcdBaseline(Mode mode, List<SignalledSource> sources) throws Exception {
            members = new Members(Collections.nCopies(sources.size(), 1));
            BaselineKeys keys = new BaselineKeys(members.cluster);
            observerClient = Client.builder().endpoints(etcd.endpoints().urls()).build();
            observer = BlockObserver.start(keys, observerClient, 5_000);
            for (int i = 0; i < sources.size(); i++) {
                // One jetcd client per owner, as one per Manager process would be.
                Client c = Client.builder().endpoints(etcd.endpoints().urls()).build();
                clients.add(c);
                String owner = "owner-" + i;
                ownerIds.add(owner);
                PublisherConfig cfg = mode.publisher();
                EtcdBlockPublisher p = EtcdBlockPublisher.open(owner, sources.get(i), keys, cfg, new JetcdTxnPort(c, cfg.callTimeoutMs(), false));
                p.start();
                publishers.add(p);
            }
        }

        @Override
        public long[] installed(int i) {
            BlockObserver.Installed s = observer.installed(ownerIds.get(i));
            return new long[] {s.sequence(), s.monoNanos()};
        }

        @Override
        public Optional<String> failure() {
            for (EtcdBlockPublisher p : publishers) {
                if (p.failure().isPresent()) {
                    return Optional.of("publisher " + p.owner() + " failed: " + p.failure().get());
                }
            }
            return observer.failure().map(t -> "observer watch failed: " + t);
        }

        @Override
        public long transactions() {
            return publishers.stream().mapToLong(EtcdBlockPublisher::transactionCount).sum();
        }

        @Override
        public double streamBytes() {
            return 0;
        }

        @Override
        public void close() {
            publishers.forEach(EtcdBlockPublisher::close);
            observer.close();
            observerClient.close();
            clients.forEach(Client::close);
            members.close();
        }
    }

    // ------------------------------------------------------------------ etcd metrics

    /** One scrape of etcd's /metrics plus etcd's process CPU. */
    record Scrape(long nanos, String text, long etcdCpuTicks) {}

    private Scrape scrape() {
        return scrape(etcd);
    }

    /** etcd's /metrics and CPU now (member 0). */
    static Scrape scrape(EtcdFixture etcd) {
        EtcdFixture.Member m = etcd.member(0);
        return new Scrape(System.nanoTime(), etcd.scrape(m), cpuTicks(m.pid()));
    }

    private static long cpuTicks(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime + stime (fields 14, 15)
        } catch (Exception e) {
            return -1;
        }
    }

    private static final Pattern BY_METHOD = Pattern.compile("grpc_server_msg_received_total\\{[^}]*grpc_method=\"([^\"]+)\"[^}]*\\} (\\S+)");

    static EtcdRates rates(Scrape a, Scrape b) {
        double s = (b.nanos() - a.nanos()) / 1e9;
        Map<String, Double> before = byMethod(a.text());
        Map<String, Double> after = byMethod(b.text());
        Map<String, Double> per = new TreeMap<>();
        double total = 0;
        for (Map.Entry<String, Double> e : after.entrySet()) {
            double d = e.getValue() - before.getOrDefault(e.getKey(), 0.0);
            if (d > 0) {
                per.put(e.getKey(), d / s);
                total += d;
            }
        }
        return new EtcdRates(s, total / s, delta(a, b, "grpc_server_started_total") / s,
                delta(a, b, "etcd_network_client_grpc_received_bytes_total") / s, delta(a, b, "etcd_network_client_grpc_sent_bytes_total") / s,
                delta(a, b, "etcd_disk_wal_fsync_duration_seconds_count") / s,
                a.etcdCpuTicks() < 0 || b.etcdCpuTicks() < 0 ? Double.NaN : (b.etcdCpuTicks() - a.etcdCpuTicks()) / 100.0 / s, per);
    }

    private static double delta(Scrape a, Scrape b, String metric) {
        return EtcdFixture.metricValue(b.text(), metric) - EtcdFixture.metricValue(a.text(), metric);
    }

    private static Map<String, Double> byMethod(String text) {
        Map<String, Double> out = new TreeMap<>();
        Matcher m = BY_METHOD.matcher(text);
        while (m.find()) {
            out.merge(m.group(1), Double.parseDouble(m.group(2)), Double::sum);
        }
        return out;
    }

    static long processCpuNanos() {
        return ProcessHandle.current().info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
    }

    // ------------------------------------------------------------------ report

    private static String line(Cell c) {
        Stats v = c.stats();
        EtcdRates e = c.etcd();
        return String.format("visibility n=%d p50 %.3f p99 %.3f max %.3f ms; etcd msgs %.2f/s calls %.2f/s rx %.0f B/s tx %.0f B/s "
                + "WAL fsyncs %.2f/s etcd cpu %.3f cores; harness cpu %.2f cores; mutations %,d, txns %,d, stream %.0f B/s",
                v.n(), v.p50Ms(), v.p99Ms(), v.maxMs(), e.messagesPerS(), e.callsPerS(), e.rxBytesPerS(), e.txBytesPerS(), e.walFsyncsPerS(),
                e.etcdCpuCoresBusy(), c.processCpuCoresBusy(), c.mutations(), c.transactions(), c.streamBytesPerS());
    }

    private void report(Map<Mode, Cell> cells) {
        run.report("| mode | samples | visibility p50 ms | p99 ms | max ms | etcd msgs/s | etcd rx B/s | etcd tx B/s | WAL fsyncs/s | etcd CPU cores | "
                + "etcd txns | stream B/s | harness CPU cores |");
        run.report("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for (Cell c : cells.values()) {
            Stats v = c.stats();
            EtcdRates e = c.etcd();
            run.report(String.format("| %s | %,d | %.3f | %.3f | %.3f | %.2f | %.0f | %.0f | %.2f | %.3f | %,d | %.0f | %.2f |", c.mode().label, v.n(),
                    v.p50Ms(), v.p99Ms(), v.maxMs(), e.messagesPerS(), e.rxBytesPerS(), e.txBytesPerS(), e.walFsyncsPerS(), e.etcdCpuCoresBusy(),
                    c.transactions(), c.streamBytesPerS(), c.processCpuCoresBusy()));
        }
        for (Cell c : cells.values()) {
            run.report("  etcd messages/s by method, " + c.mode().label + ": " + c.etcd().messagesByMethodPerS());
        }
        Cell streaming = cells.get(Mode.STREAMING_FULL);
        Cell control = cells.get(Mode.IDLE_CONTROL);
        P1Figures.of(cells).ifPresent(p1 -> verdicts.atLeast(
                String.format(Locale.ROOT, "P1 visibility p99, frozen publisher / streaming, %d owners", settings.owners()),
                P1_RATIO_MIN, p1.ratio(), "×", String.format(Locale.ROOT, "p99 %.3f / %.3f ms, p50 %.3f / %.3f ms, %d samples",
                        p1.publisherP99Ms(), p1.streamingP99Ms(), p1.publisherP50Ms(), p1.streamingP50Ms(), p1.samples())));
        if (streaming != null && control != null) {
            double[][] pairs = {{streaming.etcd().messagesPerS(), control.etcd().messagesPerS()},
                {streaming.etcd().rxBytesPerS(), control.etcd().rxBytesPerS()}, {streaming.etcd().txBytesPerS(), control.etcd().txBytesPerS()},
                {streaming.etcd().walFsyncsPerS(), control.etcd().walFsyncsPerS()}};
            String[] names = {"messages/s", "rx B/s", "tx B/s", "WAL fsyncs/s"};
            for (int i = 0; i < pairs.length; i++) {
                double s = pairs[i][0];
                double c = pairs[i][1];
                String both = String.format(Locale.ROOT, "%.2f vs %.2f", s, c);
                if (c == 0) { // a deviation from 0 is undefined: both 0 passes, anything else fails
                    verdicts.check("P2 etcd " + names[i] + ", streaming vs idle control", "within ±" + ContractVerdicts.num(P2_DEVIATION_PERCENT_MAX) + " %",
                            s == 0 ? "both 0" : "control 0", both, s == 0);
                } else {
                    verdicts.withinPercent("P2 etcd " + names[i] + ", streaming vs idle control", P2_DEVIATION_PERCENT_MAX, 100 * (s / c - 1), both);
                }
            }
        }
        Map<String, long[]> cdf = new java.util.LinkedHashMap<>();
        cells.values().stream().filter(c -> c.visibilityNs().length > 0).forEach(c -> cdf.put(c.mode().label, c.visibilityNs()));
        Plots.cdf(run, "p1-visibility-cdf.png", settings.owners() + " owners: publication -> install visibility (PERF-5 ablations)", cdf);
        Map<String, Map<String, Double>> bars = new java.util.LinkedHashMap<>();
        Map<String, Double> msgs = new java.util.LinkedHashMap<>();
        Map<String, Double> fsync = new java.util.LinkedHashMap<>();
        for (Cell c : cells.values()) {
            msgs.put(c.mode().label, c.etcd().messagesPerS());
            fsync.put(c.mode().label, c.etcd().walFsyncsPerS());
        }
        bars.put("etcd gRPC messages/s", msgs);
        bars.put("etcd WAL fsyncs/s", fsync);
        Plots.bars(run, "p1-etcd-load.png", settings.owners() + " owners: etcd load per mode (etcd's own /metrics)", "per second", bars);
        run.report("  raw samples: " + run.dir());
    }

    /** Bounded waits of the harness. */
    static final class Await {
        private Await() {}

        static void until(String what, Duration bound, java.util.function.BooleanSupplier done) {
            long deadline = System.nanoTime() + bound.toNanos();
            while (!done.getAsBoolean()) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("not within " + bound.toSeconds() + " s: " + what);
                }
                LockSupport.parkNanos(500_000); // a bounded poll of a condition, not a sleep as synchronization
            }
        }

        /** A measurement window of fixed length (the control's idle window), not a synchronization. */
        static void sleepCadence(Duration d) {
            long end = System.nanoTime() + d.toNanos();
            while (end - System.nanoTime() > 0) {
                LockSupport.parkNanos(Math.min(end - System.nanoTime(), 1_000_000_000L));
            }
        }
    }

}
