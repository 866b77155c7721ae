package orbitkv.conformance.perf;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import orbitkv.conformance.manager.ManagerApi;
import orbitkv.conformance.manager.ManagerProcess;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.MembershipAdmin;

/**
 * Visibility across real Managers, measurement contract s2.10-performance-v2 (PERF-1, PERF-2): N source Managers
 * and one observer Manager as separate OS processes on loopback, one etcd. Each sample is one owner's burst (one
 * {@code /cache/save} of {@code burstBlocks} blocks with the 16-byte PERF-4 header) ending at a terminal sequence
 * (the save's {@code head_sequence}); the next burst of that owner starts only after the observer installed exactly
 * that sequence. Stamps are the Managers' own ({@code inventory.last_publication} of the source and
 * {@code owners[].installed} of the observer, both {@code System.nanoTime()} = CLOCK_MONOTONIC), subtracted only
 * when they name the same node, epoch, incarnation, the observer's scope digest, the exact terminal sequence and the
 * view id the cell started with; a superseded sequence or a replacement view fails collection. The harness checks
 * that every process shares its boot id and time namespace ({@link ClockDomain}).
 *
 * <p>The four endpoints are reported separately (PERF-2):
 * <ol>
 *   <li>{@code serial-barrier}: per owner in turn, save, {@code /cache/sync} (the fence), {@code /cache/metadata/await};</li>
 *   <li>{@code concurrent-barrier}: every owner saves, all fences are captured, then awaited with at most
 *       {@code concurrency} in flight, each followed by the unchanged exact per-owner check;</li>
 *   <li>{@code ordinary}: publication to installation with no sync, flush or await in the path;</li>
 *   <li>{@code save-start}: the harness's clock before the save request to the observer's installation.</li>
 * </ol>
 * For the barrier endpoints the barrier's completion (the await reply) is reported next to the install stamp, never
 * instead of it. Bootstrap is not measured here (every cell starts after all views are installed).
 */
public final class VisibilityHarness {
    /** The four visibility endpoints of PERF-2. */
    public enum Endpoint {
        SERIAL_BARRIER("serial-barrier"), CONCURRENT_BARRIER("concurrent-barrier"), ORDINARY("ordinary"), SAVE_START("save-start");

        final String label;

        Endpoint(String label) {
            this.label = label;
        }

        static Endpoint parse(String s) {
            for (Endpoint e : values()) {
                if (e.label.equals(s.strip())) {
                    return e;
                }
            }
            throw new IllegalArgumentException("unknown endpoint '" + s + "'; expected serial-barrier, concurrent-barrier, ordinary, save-start");
        }
    }

    /**
     * One cell's parameters (issue 19 reuses them for scaling).
     *
     * @param owners source Managers
     * @param warmup warm-up samples per endpoint (kept in the raw file, not in the figures)
     * @param samples measured samples per endpoint
     * @param burstBlocks blocks per burst (one save, at most 128)
     * @param repeatPercent share of a burst's blocks that re-save a block of the owner's hot set (churn)
     * @param cadenceMs per-owner burst cadence of the non-serial endpoints
     * @param concurrency in-flight awaits of the concurrent barrier
     * @param blockBytes payload bytes per block (>= 16)
     * @param namespaces namespaces the owners spread their bursts over
     */
    public record Settings(int owners, int warmup, int samples, int burstBlocks, int repeatPercent, long cadenceMs,
            int concurrency, int blockBytes, int namespaces, List<Endpoint> endpoints) {
        public Settings {
            if (owners < 1 || warmup < 0 || samples < 1 || burstBlocks < 1 || burstBlocks > 128 || repeatPercent < 0
                    || repeatPercent > 100 || cadenceMs < 0 || concurrency < 1 || blockBytes < 16 || namespaces < 1) {
                throw new IllegalArgumentException("invalid visibility settings: " + this);
            }
            endpoints = List.copyOf(endpoints);
        }

        /** From {@code bench.visibility.*} system properties; the defaults are the formal cell. */
        public static Settings fromProperties() {
            List<Endpoint> e = new ArrayList<>();
            for (String s : System.getProperty("bench.visibility.endpoints", "serial-barrier,concurrent-barrier,ordinary,save-start").split(",")) {
                e.add(Endpoint.parse(s));
            }
            return new Settings(Integer.getInteger("bench.visibility.owners", 4), Integer.getInteger("bench.visibility.warmup", 50),
                    Integer.getInteger("bench.visibility.samples", 1000), Integer.getInteger("bench.visibility.burst", 8),
                    Integer.getInteger("bench.visibility.repeatPercent", 50), Long.getLong("bench.visibility.cadenceMs", 17),
                    Integer.getInteger("bench.visibility.concurrency", 4), Integer.getInteger("bench.visibility.blockBytes", 4096),
                    Integer.getInteger("bench.visibility.namespaces", 1), e);
        }
    }

    /** One sample, bound to its owner identity, scope digest, view and exact terminal sequence. */
    public record Sample(Endpoint endpoint, boolean warmup, String node, long epoch, String incarnation, String scopeDigest,
            String viewId, long terminal, long saveStartNs, long publishNs, long installNs, long observedNs) {
        long visibilityNs() {
            return endpoint == Endpoint.SAVE_START ? installNs - saveStartNs : installNs - publishNs;
        }

        String csv() {
            return String.join(",", endpoint.label, warmup ? "warmup" : "measured", node, Long.toString(epoch), incarnation,
                    scopeDigest, viewId, Long.toString(terminal), Long.toString(saveStartNs), Long.toString(publishNs),
                    Long.toString(installNs), Long.toString(observedNs));
        }
    }

    static final String CSV_HEADER = "endpoint,phase,node,epoch,incarnation,scope_digest,view_id,terminal_sequence,save_start_mono_ns,"
            + "publication_mono_ns,install_mono_ns,observed_mono_ns";

    /** Sampling failed: a superseded or replacement-view sample, a stamp not naming the terminal sequence, a bound hit. */
    public static final class CollectionFailed extends RuntimeException {
        CollectionFailed(String message) {
            super(message);
        }
    }

    private static final Duration SAMPLE_BOUND = Duration.ofSeconds(30);
    private static final String NS_PREFIX = "vis-ns-";

    private final Settings settings;
    private final BenchRun run;
    private final Path work;
    private final EtcdEndpoints etcd;
    private final String cluster = "vis-" + Long.toHexString(System.nanoTime());
    private final List<ManagerProcess> processes = new ArrayList<>();
    private final List<Owner> owners = new ArrayList<>();
    private ManagerApi observer;
    private String observerScopeDigest;
    private Sampler sampler;

    /** One source Manager: its identity as its own status reports it, its API and its burst state. */
    static final class Owner {
        final int index;
        final ManagerApi api;
        final String node;
        final long epoch;
        final String incarnation;
        final Random random;
        final List<String> hot = new ArrayList<>();
        long bursts;
        String viewId;

        Owner(int index, ManagerApi api, JsonNode self, long seed) {
            this.index = index;
            this.api = api;
            this.node = self.get("node_id").asText();
            this.epoch = self.get("node_epoch").asLong();
            this.incarnation = self.get("incarnation").asText();
            this.random = new Random(seed);
        }
    }

    public VisibilityHarness(Settings settings, BenchRun run, Path work, EtcdEndpoints etcd) {
        this.settings = settings;
        this.run = run;
        this.work = work;
        this.etcd = etcd;
    }

    /** Starts the Managers, runs every endpoint, writes the raw samples and prints the tables; returns the samples. */
    public Map<Endpoint, List<Sample>> run() throws Exception {
        Map<Endpoint, List<Sample>> out = new EnumMap<>(Endpoint.class);
        try {
            start();
            ClockDomain.Domain domain = ClockDomain.check(processes.stream().map(ManagerProcess::pid).toList());
            run.report("visibility (s2.10-performance-v2): " + settings);
            run.report("  clock domain: " + domain.describe());
            for (Endpoint e : settings.endpoints()) {
                List<Sample> samples = switch (e) {
                    case SERIAL_BARRIER -> serialBarrier();
                    case CONCURRENT_BARRIER -> concurrentBarrier();
                    case ORDINARY, SAVE_START -> ordinary(e);
                };
                out.put(e, samples);
                run.csv("visibility-" + e.label + ".csv", CSV_HEADER, samples.stream().map(Sample::csv).toList());
            }
            ClockDomain.requireSameBoot(domain);
            ClockDomain.check(processes.stream().map(ManagerProcess::pid).toList());
            report(out);
            return out;
        } finally {
            close();
        }
    }

    // ------------------------------------------------------------------ processes

    private void start() throws Exception {
        try (MembershipAdmin admin = MembershipAdmin.connect(etcd, cluster, 5_000)) {
            if (!(admin.format() instanceof MembershipAdmin.Formatted)) {
                throw new IllegalStateException("cannot format cluster " + cluster);
            }
        }
        ManagerProcess obs = launch("observer");
        List<ManagerProcess> sources = new ArrayList<>();
        for (int i = 0; i < settings.owners(); i++) {
            sources.add(launch("owner-" + i));
        }
        obs.awaitReady();
        observer = new ManagerApi(obs.httpBase());
        for (int i = 0; i < sources.size(); i++) {
            sources.get(i).awaitReady();
            ManagerApi api = new ManagerApi(sources.get(i).httpBase());
            owners.add(new Owner(i, api, api.status().get("self"), 20261130L + i));
        }
        JsonNode status = observer.status();
        observerScopeDigest = status.at("/scope/digest").asText();
        sampler = new Sampler(observer);
        sampler.start();
        for (Owner o : owners) {
            OwnerRow r = sampler.await(o, row -> row.viewId() != null && "INSTALLED".equals(row.state()), "bootstrap view of " + o.node);
            o.viewId = r.viewId();
        }
    }

    private ManagerProcess launch(String node) throws IOException {
        List<String> args = new ArrayList<>(List.of("manager", "--cluster", cluster, "--node-id", node, "--etcd", etcd.toString(),
                "--http-listen", "127.0.0.1:0", "--peer-listen", "127.0.0.1:0", "--dram", "128MiB", "--block-bytes-max", "1MiB",
                "--dram-dir", Files.createDirectories(work.resolve("dram-" + node)).toString()));
        ManagerProcess m = ManagerProcess.launch(node, work.resolve("logs"), args);
        processes.add(m);
        return m;
    }

    private void close() {
        if (sampler != null) {
            sampler.stop();
        }
        processes.forEach(ManagerProcess::close);
    }

    // ------------------------------------------------------------------ bursts

    /** One save of a burst; returns {saveStartNs, terminal sequence}. */
    private long[] burst(Owner o) {
        Map<String, byte[]> blocks = new LinkedHashMap<>();
        long generation = ++o.bursts;
        for (int j = 0; j < settings.burstBlocks(); j++) {
            String key;
            if (!o.hot.isEmpty() && o.random.nextInt(100) < settings.repeatPercent()) {
                key = o.hot.get(o.random.nextInt(o.hot.size()));
            } else {
                key = String.format("%08x%016x%08x", o.index, generation, j);
                if (o.hot.size() < 256) {
                    o.hot.add(key);
                }
            }
            blocks.put(key, ManagerApi.payload(generation, j, settings.blockBytes()));
        }
        String ns = NS_PREFIX + (generation % settings.namespaces());
        long t0 = System.nanoTime();
        ManagerApi.Reply r = o.api.save(ns, blocks);
        if (r.status() != 200) {
            throw new CollectionFailed(o.node + " save answered " + r.status() + ": " + r.text());
        }
        return new long[] {t0, r.json().get("head_sequence").asLong()};
    }

    /** The source's publication stamp; it must name exactly {@code terminal} (nothing else mutates this owner). */
    private static long publication(Owner o, long terminal) {
        JsonNode status = o.api.status();
        JsonNode self = status.get("self");
        if (!self.get("incarnation").asText().equals(o.incarnation)) {
            throw new CollectionFailed(o.node + " changed incarnation: " + self);
        }
        JsonNode p = status.at("/inventory/last_publication");
        if (p.get("sequence").asLong() != terminal) {
            throw new CollectionFailed(o.node + " last publication " + p + " does not name the terminal sequence " + terminal
                    + " (a superseded sample)");
        }
        return p.get("mono_ns").asLong();
    }

    /** Waits until the observer installed exactly {@code terminal} of the owner's view (PERF-1). */
    private OwnerRow installedExactly(Owner o, long terminal) {
        OwnerRow r = sampler.await(o, row -> row.installedSequence() >= terminal, o.node + " installed through " + terminal);
        if (r.installedSequence() != terminal) {
            throw new CollectionFailed(o.node + ": observer installed " + r.installedSequence() + " past the terminal sequence "
                    + terminal + " (a superseded sample)");
        }
        if (!o.viewId.equals(r.viewId())) {
            throw new CollectionFailed(o.node + ": observer view " + r.viewId() + " replaced " + o.viewId + " (a replacement-view sample)");
        }
        return r;
    }

    private Sample sample(Endpoint e, boolean warmup, Owner o, long[] saved, OwnerRow row, long observedNs) {
        long publish = publication(o, saved[1]);
        return new Sample(e, warmup, o.node, o.epoch, o.incarnation, observerScopeDigest, row.viewId(), saved[1], saved[0], publish,
                row.installedMonoNs(), observedNs);
    }

    // ------------------------------------------------------------------ endpoints

    private List<Sample> serialBarrier() {
        List<Sample> out = new ArrayList<>();
        int total = settings.warmup() + settings.samples();
        while (out.size() < total) {
            for (Owner o : owners) {
                if (out.size() >= total) {
                    break;
                }
                long[] saved = burst(o);
                JsonNode fence = syncFence(o, saved[1]);
                awaitFence(fence);
                long done = System.nanoTime();
                out.add(sample(Endpoint.SERIAL_BARRIER, out.size() < settings.warmup(), o, saved, installedExactly(o, saved[1]), done));
            }
        }
        return out;
    }

    private List<Sample> concurrentBarrier() throws Exception {
        List<Sample> out = Collections.synchronizedList(new ArrayList<>());
        int total = settings.warmup() + settings.samples();
        ExecutorService pool = Executors.newFixedThreadPool(settings.concurrency());
        Semaphore inFlight = new Semaphore(settings.concurrency());
        try {
            while (out.size() < total) {
                List<long[]> saved = new ArrayList<>();
                List<JsonNode> fences = new ArrayList<>();
                for (Owner o : owners) {
                    saved.add(burst(o));
                }
                for (int i = 0; i < owners.size(); i++) {
                    fences.add(syncFence(owners.get(i), saved.get(i)[1]));
                }
                List<Future<?>> waits = new ArrayList<>();
                int base = out.size();
                for (int i = 0; i < owners.size(); i++) {
                    Owner o = owners.get(i);
                    long[] s = saved.get(i);
                    JsonNode fence = fences.get(i);
                    boolean warm = base + i < settings.warmup();
                    inFlight.acquire();
                    waits.add(pool.submit(() -> {
                        try {
                            awaitFence(fence);
                            long done = System.nanoTime();
                            out.add(sample(Endpoint.CONCURRENT_BARRIER, warm, o, s, installedExactly(o, s[1]), done));
                        } finally {
                            inFlight.release();
                        }
                        return null;
                    }));
                }
                for (Future<?> f : waits) {
                    f.get(SAMPLE_BOUND.toMillis(), TimeUnit.MILLISECONDS);
                }
            }
        } finally {
            pool.shutdownNow();
        }
        List<Sample> trimmed = new ArrayList<>(out.subList(0, Math.min(out.size(), total)));
        return trimmed;
    }

    private JsonNode syncFence(Owner o, long terminal) {
        ManagerApi.Reply r = o.api.sync();
        if (r.status() != 200) {
            throw new CollectionFailed(o.node + " sync answered " + r.status() + ": " + r.text());
        }
        JsonNode fence = r.json().get("inventory_fence");
        if (fence.get("inventory_sequence").asLong() != terminal) {
            throw new CollectionFailed(o.node + " fence " + fence + " is not the terminal sequence " + terminal);
        }
        return fence;
    }

    private void awaitFence(JsonNode fence) {
        ManagerApi.Reply r = observer.await(fence, observerScopeDigest, SAMPLE_BOUND.toMillis());
        if (r.status() != 200) {
            throw new CollectionFailed("await " + fence + " answered " + r.status() + ": " + r.text());
        }
    }

    /** Ordinary publication -> install (or save start -> install): every owner on its own cadence, no barrier. */
    private List<Sample> ordinary(Endpoint e) throws Exception {
        List<Sample> out = Collections.synchronizedList(new ArrayList<>());
        int warmPerOwner = (settings.warmup() + owners.size() - 1) / owners.size();
        int perOwner = warmPerOwner + (settings.samples() + owners.size() - 1) / owners.size();
        ExecutorService pool = Executors.newFixedThreadPool(owners.size());
        try {
            List<Future<?>> loops = new ArrayList<>();
            for (Owner o : owners) {
                loops.add(pool.submit(() -> {
                    long next = System.nanoTime();
                    for (int i = 0; i < perOwner; i++) {
                        long[] saved = burst(o);
                        OwnerRow row = installedExactly(o, saved[1]);
                        long seen = System.nanoTime();
                        out.add(sample(e, i < warmPerOwner, o, saved, row, seen));
                        next += TimeUnit.MILLISECONDS.toNanos(settings.cadenceMs());
                        long wait = next - System.nanoTime();
                        if (wait > 0) {
                            LockSupport.parkNanos(wait); // the declared source cadence, not a synchronization
                        } else {
                            next = System.nanoTime();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : loops) {
                f.get(30, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        return new ArrayList<>(out);
    }

    // ------------------------------------------------------------------ the observer's status sampler

    /** One owner row of the observer's status. */
    record OwnerRow(String state, String viewId, long installedSequence, long installedMonoNs) {}

    /** Polls the observer's paginated status on one thread and hands the latest owner rows to waiters. */
    static final class Sampler {
        private final ManagerApi observer;
        private final Map<String, OwnerRow> rows = new ConcurrentHashMap<>();
        private volatile boolean stopped;
        private volatile RuntimeException failure;
        private Thread thread;
        long polls;

        Sampler(ManagerApi observer) {
            this.observer = observer;
        }

        void start() {
            thread = Thread.ofPlatform().daemon(true).name("visibility-sampler").start(() -> {
                while (!stopped) {
                    try {
                        JsonNode s = observer.status();
                        polls++;
                        for (JsonNode o : s.get("owners")) {
                            JsonNode inst = o.get("installed");
                            rows.put(o.at("/owner/incarnation").asText(), new OwnerRow(o.get("state").asText(),
                                    o.get("view_id").isNull() ? null : o.get("view_id").asText(),
                                    inst.get("sequence").isNull() ? -1 : inst.get("sequence").asLong(),
                                    inst.get("mono_ns").isNull() ? -1 : inst.get("mono_ns").asLong()));
                        }
                        synchronized (this) {
                            notifyAll();
                        }
                    } catch (RuntimeException e) {
                        failure = e;
                    }
                    LockSupport.parkNanos(1_000_000); // 1 ms between polls; the stamps are the Managers', not the poll's
                }
            });
        }

        OwnerRow await(Owner o, java.util.function.Predicate<OwnerRow> done, String what) {
            long deadline = System.nanoTime() + SAMPLE_BOUND.toNanos();
            synchronized (this) {
                while (true) {
                    OwnerRow r = rows.get(o.incarnation);
                    if (r != null && done.test(r)) {
                        return r;
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new CollectionFailed("no " + what + " within " + SAMPLE_BOUND.toSeconds() + " s (row " + r
                                + (failure == null ? "" : ", sampler error " + failure) + ")");
                    }
                    try {
                        wait(Math.max(1, left / 1_000_000));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new CollectionFailed("interrupted waiting for " + what);
                    }
                }
            }
        }

        void stop() {
            stopped = true;
            if (thread != null) {
                try {
                    thread.join(5_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    // ------------------------------------------------------------------ report

    private void report(Map<Endpoint, List<Sample>> all) {
        run.report("| endpoint | measured samples | p50 ms | p99 ms | max ms | barrier or observation completion p50 / p99 ms |");
        run.report("|---|---|---|---|---|---|");
        for (Map.Entry<Endpoint, List<Sample>> e : all.entrySet()) {
            List<Sample> m = e.getValue().stream().filter(s -> !s.warmup()).toList();
            long[] vis = m.stream().mapToLong(Sample::visibilityNs).toArray();
            long[] done = m.stream().mapToLong(s -> s.observedNs() - (e.getKey() == Endpoint.SAVE_START ? s.saveStartNs() : s.publishNs())).toArray();
            Stats v = Stats.of(vis);
            Stats d = Stats.of(done);
            run.report(String.format("| %s | %s | %.3f / %.3f (%s) |", e.getKey().label, v.row(), d.p50Ms(), d.p99Ms(),
                    e.getKey() == Endpoint.SERIAL_BARRIER || e.getKey() == Endpoint.CONCURRENT_BARRIER ? "await reply" : "status poll saw it"));
        }
        run.report("  raw samples (warm-up and measured): " + run.dir());
    }
}
