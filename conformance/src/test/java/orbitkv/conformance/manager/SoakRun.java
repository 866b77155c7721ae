package orbitkv.conformance.manager;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.concurrent.locks.LockSupport;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.manager.SoakSampler.Life;
import orbitkv.conformance.peer.FaultProxy;
import orbitkv.conformance.peer.LinkFaults;
import orbitkv.testing.Await;

/**
 * The soak (issue 37 item 6): three Managers ({@code a}, {@code b}, {@code c}) on one {@link ManagerCluster} of a real
 * etcd, {@code c} reaching etcd through a {@link FaultProxy}. One driver thread runs the {@link SoakWorkload} churn and,
 * in each period of {@link Config#period} (10 minutes, or the whole run if shorter), three events: at a quarter a
 * {@code kill -9} of {@code a} or {@code b} (alternating) and its restart, at a half a SIGTERM of the other and its
 * restart, at three quarters {@code c} fenced (etcd blackholed until its health answers 503) and healed (etcd back,
 * awaited until it serves as the next epoch). {@code c} is never restarted, so its series span the whole run; the
 * restarted members' lives are judged each on its own. A second thread samples every member every
 * {@link Config#interval} ({@link SoakSampler}); {@link SoakVerdict} judges every series of every life after
 * {@link Config#warmup}.
 */
final class SoakRun implements AutoCloseable {
    /** The Manager JVM: a fixed, pre-touched heap, so RSS measures the process and not the heap's first touches. */
    private static final List<String> JVM = List.of("-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch", "-XX:MaxDirectMemorySize=256m");
    /**
     * The bound of each await of an event (a restart's ready line, membership, fence, heal): generous, since a JVM
     * start took over 45 s at a load average of 40 on this machine.
     */
    private static final Duration EVENT_BOUND = Duration.ofSeconds(180);
    /** Interim reports (samples and verdicts so far) while the soak runs. */
    private static final long SNAPSHOT_NANOS = Duration.ofMinutes(5).toNanos();
    /** The driver's pause between steps: a paced churn, a good neighbour on a shared 2-core machine. */
    private static final long STEP_PAUSE_NANOS = 100_000_000L;

    /**
     * @param length the churn's duration (after the cluster is up)
     * @param interval between samples
     * @param warmup the start of each life that is not judged
     * @param minJudged a life is judged when its samples after warm-up span at least this
     * @param period the event period (kill -9, SIGTERM, fence and heal once each)
     * @param liveBatches batches kept before the oldest is evicted explicitly (the cluster's steady state)
     */
    record Config(Duration length, Duration interval, Duration warmup, Duration minJudged, Duration period, int liveBatches) {
        /**
         * The soak: samples every 10 s, 10-minute periods, 3 minutes of warm-up per life, 64 live batches;
         * shorter than 10 minutes (the gate): one period, a third of it warm-up, 8 live batches (a steady state within
         * seconds).
         */
        static Config minutes(long minutes) {
            Duration length = Duration.ofMinutes(minutes);
            boolean full = minutes >= 10;
            Duration period = full ? Duration.ofMinutes(10) : length;
            Duration warmup = full ? Duration.ofMinutes(3) : length.dividedBy(3);
            return new Config(length, Duration.ofSeconds(10), warmup, period.dividedBy(4), period, full ? 64 : 8);
        }
    }

    record Result(List<SoakSampler.Sample> samples, List<SoakVerdict.Judgement> judgements, SoakWorkload workload,
                  List<String> events, int eventFailures, long skippedSamples) {
        boolean passed() {
            return workload.mismatches == 0 && eventFailures == 0 && workload.blocksVerified > 0
                    && judgements.stream().noneMatch(j -> j.status() == SoakVerdict.Status.GROWING)
                    && judgements.stream().anyMatch(j -> j.status() == SoakVerdict.Status.FLAT);
        }
    }

    private final Config config;
    private final ManagerCluster cluster;
    private final FaultProxy etcdOfC;
    private final Map<String, Life> members = new ConcurrentHashMap<>();
    private final Map<String, Double> lifeStarts = new LinkedHashMap<>();
    private final SoakSampler sampler = new SoakSampler();
    private final SoakWorkload workload;
    private final List<String> events = new ArrayList<>();
    private int eventFailures;
    private Consumer<Result> interim = r -> {};
    private long startNanos;

    SoakRun(EtcdFixture etcd, Config config) throws IOException {
        this.config = config;
        this.workload = new SoakWorkload(config.liveBatches());
        this.cluster = ManagerCluster.format(etcd, "soak");
        this.etcdOfC = cluster.own(FaultProxy.inFrontOf(etcd.member(0).clientUrl()));
    }

    /**
     * Starts the three Managers, runs the churn and the events for the configured length, and judges; every 5 minutes
     * hands {@code interim} the result so far (a run cut short still leaves its samples and verdicts).
     */
    Result run(Consumer<Result> interim) throws Exception {
        this.interim = interim;
        for (String node : List.of("a", "b", "c")) {
            launch(node);
        }
        awaitAdmitted();
        startNanos = System.nanoTime();
        members.values().forEach(l -> lifeStarts.put(l.name(), 0.0));
        Thread samplerThread = Thread.ofPlatform().daemon(true).name("soak-sampler").start(this::sampleLoop);
        try {
            drive();
        } finally {
            samplerThread.interrupt();
            samplerThread.join(60_000);
        }
        return result();
    }

    private Result result() {
        return new Result(sampler.samples(), judge(), workload, List.copyOf(events), eventFailures, sampler.skipped());
    }

    private double seconds() {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    private void drive() {
        long periodNanos = config.period().toNanos();
        long lengthNanos = config.length().toNanos();
        int done = 0; // events run so far, three per period
        long step = 0;
        long nextSnapshot = SNAPSHOT_NANOS;
        while (System.nanoTime() - startNanos < lengthNanos) {
            if (System.nanoTime() - startNanos >= nextSnapshot) {
                nextSnapshot += SNAPSHOT_NANOS;
                interim.accept(result());
            }
            long due = (done / 3) * periodNanos + (done % 3 + 1) * periodNanos / 4;
            if (System.nanoTime() - startNanos >= due && due < lengthNanos) {
                event(done / 3, done % 3);
                done++;
                continue;
            }
            String[] order = {"a", "b", "c"};
            Life source = members.get(order[(int) (step % 3)]);
            Life requester = members.get(order[(int) ((step + 1) % 3)]);
            step++;
            if (source != null) {
                workload.step(source, requester);
            }
            LockSupport.parkNanos(STEP_PAUSE_NANOS);
        }
    }

    private void event(int period, int which) {
        String victim = period % 2 == 0 ? (which == 0 ? "a" : "b") : (which == 0 ? "b" : "a");
        double t0 = seconds();
        String what = switch (which) {
            case 0 -> "kill -9 " + victim;
            case 1 -> "SIGTERM " + victim;
            default -> "fence and heal c";
        };
        try {
            String detail = switch (which) {
                case 0 -> restart(victim, true);
                case 1 -> restart(victim, false);
                default -> fenceAndHeal();
            };
            events.add(String.format(Locale.ROOT, "%.0f s: %s: %s (%.1f s)", t0, what, detail, seconds() - t0));
        } catch (Exception | AssertionError e) {
            eventFailures++;
            events.add(String.format(Locale.ROOT, "%.0f s: %s FAILED: %s", t0, what, e));
        }
        System.out.println("soak event: " + events.getLast());
    }

    private String restart(String node, boolean kill9) throws Exception {
        Life old = members.remove(node);
        String detail;
        if (old == null) {
            detail = node + " was not running (an earlier restart failed)";
        } else if (kill9) {
            old.process().kill9();
            detail = "killed " + old.name();
        } else {
            old.process().sigterm();
            detail = "SIGTERM exit code " + old.process().awaitExit(EVENT_BOUND) + " of " + old.name();
        }
        Life fresh = launch(node);
        lifeStarts.put(fresh.name(), seconds());
        awaitAdmitted();
        return detail + ", restarted as " + fresh.name();
    }

    private String fenceAndHeal() {
        Life c = members.get("c");
        ManagerApi api = new ManagerApi(c.process().httpBase(), Duration.ofSeconds(10));
        long heals = api.status().at("/membership/heal/heals").asLong();
        etcdOfC.faults(LinkFaults.BLACKHOLE);
        try {
            Await.until("c fenced (503)", EVENT_BOUND, () -> answers(() -> api.get("/health").status() == 503));
        } finally {
            etcdOfC.faults(LinkFaults.NONE);
        }
        Await.until("c healed", EVENT_BOUND, () -> answers(() -> api.get("/health").status() == 200
                && api.status().at("/membership/heal/heals").asLong() > heals));
        awaitAdmitted();
        return "healed as " + api.status().at("/self/incarnation").asText();
    }

    private Life launch(String node) throws IOException {
        Path gcLog = cluster.work().resolve("gc-" + node + "-" + cluster.all().size() + ".log");
        List<String> jvm = new ArrayList<>(JVM);
        jvm.add("-Xlog:gc:file=" + gcLog);
        String etcd = node.equals("c") ? etcdOfC.url().toString() : null;
        ManagerCluster.NodeOptions options = dir -> new ArrayList<>(List.of("--dram", "8MiB", "--block-bytes-max", "64KiB",
                "--journal-retention-bytes-max", "4MiB", "--journal-retention-records-max", "4096",
                "--index-budget-bytes", "32MiB", "--restore-bytes-in-flight-max", "16MiB", "--shutdown-drain-ms", "3000",
                "--idle-liveness-ms", "500", "--heal-backoff-min-ms", "200", "--heal-backoff-max-ms", "1000"));
        ManagerProcess m = etcd == null ? cluster.launch(node, jvm, options) : cluster.launch(node, etcd, jvm, options);
        m.awaitReady(EVENT_BOUND);
        Life life = new Life(node, m.name(), m, gcLog, startNanos == 0 ? 0 : seconds());
        members.put(node, life);
        return life;
    }

    /** {@code condition}, false when the Manager does not answer in time (a loaded machine): awaited again. */
    private static boolean answers(java.util.function.BooleanSupplier condition) {
        try {
            return condition.getAsBoolean();
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Every current member admits all three (a restarted one is a member again everywhere). */
    private void awaitAdmitted() {
        for (Life l : members.values()) {
            ManagerApi api = new ManagerApi(l.process().httpBase(), Duration.ofSeconds(10));
            Await.until(l.name() + " admits 3 members", EVENT_BOUND, () -> answers(() -> api.status().at("/membership/members").asInt() == 3));
        }
    }

    private void sampleLoop() {
        long intervalNanos = config.interval().toNanos();
        for (long k = 0; !Thread.currentThread().isInterrupted(); k++) {
            long due = startNanos + k * intervalNanos;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
                if (Thread.currentThread().isInterrupted()) {
                    return;
                }
            }
            sampler.sample(seconds(), List.copyOf(members.values()));
        }
    }

    private List<SoakVerdict.Judgement> judge() {
        Map<String, List<SoakSampler.Sample>> byLife = new LinkedHashMap<>();
        for (SoakSampler.Sample s : sampler.samples()) {
            byLife.computeIfAbsent(s.life(), k -> new ArrayList<>()).add(s);
        }
        List<SoakVerdict.Judgement> out = new ArrayList<>();
        byLife.forEach((life, samples) -> {
            double start = lifeStarts.getOrDefault(life, samples.getFirst().seconds());
            for (SoakVerdict.Metric m : SoakVerdict.Metric.values()) {
                List<SoakVerdict.Point> points = samples.stream()
                        .map(s -> new SoakVerdict.Point(s.seconds(), s.values()[m.ordinal()])).toList();
                out.add(SoakVerdict.judge(life, m, points, start, config.warmup().toSeconds(), config.minJudged().toSeconds()));
            }
        });
        return out;
    }

    /** The cluster's work directory (logs, GC logs). */
    Path work() {
        return cluster.work();
    }

    /** Copies the Managers' logs to {@code dir} (the harness keeps them with its report). */
    void keepLogs(Path dir) throws IOException {
        Files.createDirectories(dir);
        try (var files = Files.walk(cluster.work())) {
            for (Path p : files.filter(f -> f.toString().endsWith(".log") || f.toString().endsWith(".err")
                    || f.toString().endsWith(".out")).toList()) {
                Files.copy(p, dir.resolve(p.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    @Override
    public void close() throws IOException {
        cluster.close();
    }
}
