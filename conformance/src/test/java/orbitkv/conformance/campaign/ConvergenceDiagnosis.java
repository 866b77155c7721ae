package orbitkv.conformance.campaign;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What a CONVERGENCE failure leaves behind, so a failure that does not replay can still be explained (campaign
 * regression row 2): per live node its coverage and lease, per owner view its state, watermark, source head,
 * receipt age and last reset cause, per requester session its state, connects, installs and last error, and
 * per served session its phase, cursor, last frame and outstanding bytes (all from the status endpoint,
 * {@code GET /cache/metadata/status}, DIAG-1). The owners whose receipt age is past the freshness budget are
 * named first: they are what keeps coverage at PartialHints (IDX-12).
 *
 * <p>Bounded: the summary takes at most {@link #SUMMARY_CHARS_MAX} characters; at most {@link #DUMPS_MAX}
 * failures per run also get a directory under {@code conformance/target/campaign-failures/} holding a thread
 * dump of every live Manager (virtual threads included: {@code jcmd Thread.dump_to_file}, bounded by
 * {@link #JCMD_BOUND}) and the last {@link #LOG_TAIL_BYTES} bytes of each Manager log, since the cluster's
 * work directory is deleted when the run ends. A node that answers no status is named as such.
 */
final class ConvergenceDiagnosis {
    static final int SUMMARY_CHARS_MAX = 16_384;
    static final int DUMPS_MAX = 8;
    static final long LOG_TAIL_BYTES = 2L << 20;
    static final Duration JCMD_BOUND = Duration.ofSeconds(20);
    /** The campaign's freshness budget ({@code --freshness-budget-ms} in {@link CampaignCluster#TIMING}). */
    static final long FRESHNESS_BUDGET_MS = 3000;

    private final CampaignCluster cluster;
    private final Path failuresDir;
    private int dumps;

    ConvergenceDiagnosis(CampaignCluster cluster, Path failuresDir) {
        this.cluster = cluster;
        this.failuresDir = failuresDir;
    }

    /** One bounded line: every live node's view of the cluster, stale owners first. */
    String summary() {
        StringBuilder b = new StringBuilder();
        for (CampaignCluster.Node n : cluster.live()) {
            try {
                b.append(node(n.name, n.api.status())).append(' ');
            } catch (RuntimeException | AssertionError e) {
                b.append(n.name).append("{no answer: ").append(e.getMessage()).append("} ");
            }
        }
        b.append("expected ").append(cluster.currentIncarnations());
        return b.length() <= SUMMARY_CHARS_MAX ? b.toString() : b.substring(0, SUMMARY_CHARS_MAX) + "...(cut)";
    }

    static String node(String name, JsonNode st) {
        StringBuilder b = new StringBuilder(name).append("{self=").append(shortInc(st.at("/self/incarnation").asText()))
                .append(" valid=").append(st.at("/membership/valid").asBoolean())
                .append(" coverage=").append(st.path("coverage").asText())
                .append(" lease=").append(st.at("/membership/lease").asText())
                .append("/failed=").append(st.at("/membership/failed_renewals").asLong())
                .append(" heal=").append(st.at("/membership/heal/state").asText("-"));
        List<String> stale = new ArrayList<>();
        b.append(" owners=[");
        for (JsonNode o : st.path("owners")) {
            String inc = shortInc(o.at("/owner/incarnation").asText());
            long age = o.path("receipt_age_ms").asLong(-1);
            if (age > FRESHNESS_BUDGET_MS) {
                stale.add(inc + "(" + age + "ms)");
            }
            b.append(inc).append(':').append(o.path("state").asText())
                    .append(" wm=").append(o.path("watermark").asLong())
                    .append(" head=").append(o.path("source_head").asLong())
                    .append(" age=").append(age).append("ms")
                    .append(" reset=").append(o.path("last_reset_cause").asText("-")).append("; ");
        }
        b.append("] requester=[");
        for (JsonNode s : st.at("/sessions/requester")) {
            b.append(shortInc(s.at("/source/incarnation").asText())).append(':').append(s.path("state").asText())
                    .append(" connects=").append(s.path("connects").asLong())
                    .append(" installs=").append(s.path("installs").asLong())
                    .append(" err=").append(s.path("last_error_cause").asText("-")).append("; ");
        }
        b.append("] served=[");
        for (JsonNode s : st.at("/sessions/served")) {
            b.append(shortInc(s.at("/requester/incarnation").asText())).append(':').append(s.path("phase").asText())
                    .append(" cursor=").append(s.path("cursor").asLong())
                    .append(" last_frame=").append(s.path("last_frame").asLong())
                    .append(" out=").append(s.path("outstanding_bytes").asLong()).append("; ");
        }
        b.append("] stale_owners=").append(stale).append('}');
        return b.toString();
    }

    /** The first 20 characters of an incarnation: enough to tell them apart in one line. */
    static String shortInc(String incarnation) {
        return incarnation.length() <= 20 ? incarnation : incarnation.substring(0, 20);
    }

    /**
     * Writes thread dumps and log tails of every live Manager under {@code failuresDir/<seed>-<scenario>/};
     * returns that directory, or a reason nothing was written (the bound was reached, or an I/O error).
     */
    String dump(long seed, Scenario scenario) {
        if (dumps >= DUMPS_MAX) {
            return "(no dump: " + DUMPS_MAX + " failures of this run already dumped)";
        }
        dumps++;
        Path dir = failuresDir.resolve(seed + "-" + scenario.name());
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("status.txt"), summary() + "\n");
            for (CampaignCluster.Node n : cluster.live()) {
                threadDump(n.process.pid(), dir.resolve(n.process.name() + ".threads.txt"));
            }
            for (CampaignCluster.Node n : cluster.live()) {
                for (Path log : n.process.logFiles()) {
                    if (Files.exists(log)) {
                        copyTail(log, dir.resolve(log.getFileName()));
                    }
                }
            }
            return dir.toString();
        } catch (IOException | RuntimeException e) {
            return "(dump failed: " + e + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "(dump interrupted)";
        }
    }

    private static void threadDump(long pid, Path out) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "Thread.dump_to_file", "-format=text",
                out.toString()).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(JCMD_BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
        }
    }

    private static void copyTail(Path from, Path to) throws IOException {
        try (SeekableByteChannel in = Files.newByteChannel(from, StandardOpenOption.READ)) {
            in.position(Math.max(0, in.size() - LOG_TAIL_BYTES));
            try (InputStream s = java.nio.channels.Channels.newInputStream(in)) {
                Files.copy(s, to, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }
}
