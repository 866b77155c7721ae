package orbitkv.conformance.manager;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import orbitkv.conformance.manager.SoakVerdict.Metric;

/**
 * The soak's samples of each running Manager (issue 37 item 6): RSS, threads and open descriptors from {@code /proc};
 * the live heap after the latest full GC from the Manager's GC log ({@code -Xlog:gc}; the sampler asks for a full GC
 * with {@code jcmd PID GC.run} once per {@link #FULL_GC_EVERY} samples, so the figure is the live set, not the
 * collector's timing); pins, credits outstanding, journal bytes, index rows and sessions from
 * {@code /cache/metadata/status}. A Manager that is restarting or does not answer is skipped for that instant and
 * counted. Samples are kept in a list bounded by {@link #SAMPLES_MAX} (beyond it: refused and counted).
 */
final class SoakSampler {
    /** One running Manager life: its node, launch name, process, GC log and start second. */
    record Life(String node, String name, ManagerProcess process, Path gcLog, double startSeconds) {}

    /** One sample: seconds since the soak's start, node, life, pid, one value per {@link Metric} (NaN if unknown). */
    record Sample(double seconds, String node, String life, long pid, double[] values) {
        String csv() {
            StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%.1f,%s,%s,%d", seconds, node, life, pid));
            for (double v : values) {
                b.append(',').append(Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.0f", v));
            }
            return b.toString();
        }
    }

    static final int SAMPLES_MAX = 100_000;
    static final int FULL_GC_EVERY = 6;
    private static final Pattern FULL_GC = Pattern.compile("Pause Full \\([^)]*\\) (\\d+)([KMG])->(\\d+)([KMG])\\(");

    private final List<Sample> samples = new ArrayList<>();
    private long skipped;
    private long refused;
    private long round;

    static String csvHeader() {
        StringBuilder b = new StringBuilder("seconds,node,life,pid");
        for (Metric m : Metric.values()) {
            b.append(',').append(m.column());
        }
        return b.toString();
    }

    /** Samples every life in {@code lives} at {@code seconds}. */
    synchronized void sample(double seconds, Collection<Life> lives) {
        boolean fullGc = round++ % FULL_GC_EVERY == 0;
        for (Life l : lives) {
            if (samples.size() >= SAMPLES_MAX) {
                refused++;
                continue;
            }
            try {
                if (fullGc) {
                    requestFullGc(l.process().pid());
                }
                samples.add(new Sample(seconds, l.node(), l.name(), l.process().pid(), values(l)));
            } catch (RuntimeException | AssertionError | IOException e) {
                skipped++; // restarting, fenced without an answer, or gone: no sample at this instant
            }
        }
    }

    synchronized List<Sample> samples() {
        return List.copyOf(samples);
    }

    synchronized long skipped() {
        return skipped;
    }

    synchronized long refused() {
        return refused;
    }

    private static double[] values(Life l) throws IOException {
        long pid = l.process().pid();
        double[] v = new double[Metric.values().length];
        Arrays.fill(v, Double.NaN);
        List<String> status = Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"));
        v[Metric.RSS_BYTES.ordinal()] = procField(status, "VmRSS:") * 1024;
        v[Metric.THREADS.ordinal()] = procField(status, "Threads:");
        try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            v[Metric.FDS.ordinal()] = fds.count();
        }
        v[Metric.HEAP_AFTER_GC_BYTES.ordinal()] = heapAfterFullGc(l.gcLog());
        JsonNode s = new ManagerApi(l.process().httpBase(), Duration.ofSeconds(10)).status();
        v[Metric.PINS.ordinal()] = s.at("/transfer/source/pins_held").asDouble(Double.NaN);
        double credits = s.at("/transfer/requester/receive_credits_held_bytes").asDouble(0);
        for (JsonNode served : s.at("/sessions/served")) {
            credits += served.get("outstanding_bytes").asDouble();
        }
        v[Metric.CREDITS_OUTSTANDING_BYTES.ordinal()] = credits;
        v[Metric.JOURNAL_BYTES.ordinal()] = s.at("/inventory/journal_bytes").asDouble(Double.NaN);
        double rows = 0;
        for (JsonNode o : s.at("/owners")) {
            rows += o.get("rows").asDouble();
        }
        v[Metric.INDEX_ROWS.ordinal()] = rows;
        v[Metric.SESSIONS.ordinal()] = s.at("/sessions/requester").size() + s.at("/sessions/served").size();
        return v;
    }

    private static double procField(List<String> status, String name) {
        for (String line : status) {
            if (line.startsWith(name)) {
                return Double.parseDouble(line.substring(name.length()).strip().split("\\s+")[0]);
            }
        }
        throw new IllegalStateException("no " + name + " in /proc status");
    }

    /** The heap after the latest full GC in {@code gcLog} (bytes), NaN before the first one. */
    static double heapAfterFullGc(Path gcLog) throws IOException {
        if (!Files.exists(gcLog)) {
            return Double.NaN;
        }
        double last = Double.NaN;
        for (String line : Files.readAllLines(gcLog)) {
            Matcher m = FULL_GC.matcher(line);
            if (m.find()) {
                last = Long.parseLong(m.group(3)) * unit(m.group(4));
            }
        }
        return last;
    }

    private static long unit(String u) {
        return switch (u) {
            case "K" -> 1L << 10;
            case "M" -> 1L << 20;
            default -> 1L << 30;
        };
    }

    /** {@code jcmd PID GC.run} (the JDK's own tool next to this JVM's {@code java}), bounded to 30 s. */
    private static void requestFullGc(long pid) throws IOException {
        Path java = Path.of(ProcessHandle.current().info().command().orElseThrow());
        Process p = new ProcessBuilder(java.resolveSibling("jcmd").toString(), Long.toString(pid), "GC.run")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
