package orbitkv.recovery.trace;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.RouteTrace;
import orbitkv.recovery.TraceSampling;
import orbitkv.recovery.TracedRoute;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sampled route-trace file (the design's "sampled traces outside the checkout"): every n-th offered trace as
 * one JSON line, bounded by bytes and lines. A line that would cross a bound is refused and counted; the first write
 * error closes the file (logged once, counted). The directory is refused when it lies inside a git checkout.
 */
public final class TraceFile implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TraceFile.class);
    private static final JsonFactory JSON = new JsonFactory();

    private final TraceSampling sampling;
    private final Path path;
    private final AtomicLong offered = new AtomicLong();
    private final LongAdder sampled = new LongAdder();
    private final LongAdder refused = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private OutputStream out; // guarded by this
    private long bytes; // guarded by this
    private long lines; // guarded by this

    /** Creates the file (when sampling is on). */
    public TraceFile(TraceSampling sampling) {
        this.sampling = sampling;
        if (!sampling.enabled()) {
            this.path = null;
            return;
        }
        Path dir = sampling.directory().toAbsolutePath().normalize();
        Path checkout = enclosingCheckout(dir);
        if (checkout != null) {
            throw new IllegalArgumentException("route trace directory " + dir + " lies inside the git checkout " + checkout
                    + ": sampled traces are written outside the working tree");
        }
        this.path = dir.resolve("orbitkv-route-traces-" + ProcessHandle.current().pid() + "-" + System.currentTimeMillis() + ".jsonl");
        try {
            Files.createDirectories(dir);
            out = Files.newOutputStream(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the route trace file " + path, e);
        }
    }

    /** The nearest ancestor holding a {@code .git} entry, or null. */
    static Path enclosingCheckout(Path dir) {
        for (Path p = dir; p != null; p = p.getParent()) {
            if (Files.exists(p.resolve(".git"))) {
                return p;
            }
        }
        return null;
    }

    /** The file, or null when sampling is off. */
    public Path path() {
        return path;
    }

    /** Offers one trace; writes it iff it is the n-th and fits. */
    public void offer(RouteTrace t) {
        if (path == null || offered.incrementAndGet() % sampling.sampleEvery() != 0) {
            return;
        }
        sampled.increment();
        byte[] line;
        try {
            line = line(t);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // in-memory: not reachable
        }
        synchronized (this) {
            if (out == null) {
                refused.increment();
                return;
            }
            if (lines + 1 > sampling.fileLinesMax() || bytes + line.length > sampling.fileBytesMax()) {
                refused.increment();
                return;
            }
            try {
                out.write(line);
                out.flush();
                bytes += line.length;
                lines++;
            } catch (IOException e) {
                errors.increment();
                LOG.warn("route trace file {} failed ({}); no further traces are written to it", path, e.toString());
                closeQuietly();
            }
        }
    }

    /** {sampled, lines written, refused, errors}. */
    public long[] counters() {
        synchronized (this) {
            return new long[] {sampled.sum(), lines, refused.sum(), errors.sum()};
        }
    }

    /** The optional fields: evidence age, prediction error, load age and (issue 39 item 6) the network constraint. */
    private static void writeOptional(JsonGenerator g, RouteTrace t) throws IOException {
        if (t.evidenceAgeNanos().isPresent()) {
            g.writeNumberField("evidence_age_ns", t.evidenceAgeNanos().getAsLong());
        }
        if (t.predictionErrorNanos().isPresent()) {
            g.writeNumberField("prediction_error_ns", t.predictionErrorNanos().getAsLong());
        }
        if (t.loadAgeNanos().isPresent()) {
            g.writeNumberField("load_age_ns", t.loadAgeNanos().getAsLong());
        }
        if (t.lane().isEmpty()) {
            return;
        }
        RouteTrace.LaneNeed l = t.lane().get();
        g.writeObjectFieldStart("lane");
        g.writeStringField("lane", l.headroom().lane().toString());
        g.writeNumberField("free_bytes", l.headroom().freeBytes());
        g.writeNumberField("need_bytes", l.needBytes());
        g.writeBooleanField("blocked", l.blocked());
        g.writeEndObject();
    }

    static byte[] line(RouteTrace t) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream(1024);
        try (JsonGenerator g = JSON.createGenerator(buf)) {
            g.writeStartObject();
            g.writeNumberField("id", t.id());
            g.writeNumberField("demand_keys", t.demandKeys());
            g.writeStringField("target", t.target());
            g.writeNumberField("deadline_budget_ns", t.deadlineBudgetNanos());
            g.writeBooleanField("stale_hints_allowed", t.staleHintsAllowed());
            g.writeStringField("coverage", t.coverage().name());
            g.writeNumberField("view_generation", t.viewGeneration());
            g.writeNumberField("eligible_sources", t.eligibleSources());
            g.writeNumberField("planned_prefix", t.plannedPrefixKeys());
            g.writeStringField("planned_stop", t.plannedStop().traceName());
            g.writeStringField("mode", t.decision().mode().name());
            g.writeStringField("decision", t.decision().reason().traceName());
            g.writeBooleanField("alternative_executed", t.decision().alternativeExecuted());
            g.writeNumberField("alternatives_evaluated", t.decision().alternativesEvaluated());
            g.writeNumberField("alternatives_pruned", t.decision().alternativesPruned());
            if (t.decision().fixed().isPresent()) {
                g.writeNumberField("fixed_mean_ns", t.decision().fixed().get().meanNanos());
                g.writeNumberField("fixed_error_ns", t.decision().fixed().get().errorNanos());
                g.writeNumberField("fixed_success", t.decision().fixed().get().successProbability());
            }
            if (t.decision().alternative().isPresent()) {
                g.writeNumberField("alternative_mean_ns", t.decision().alternative().get().meanNanos());
                g.writeNumberField("alternative_error_ns", t.decision().alternative().get().errorNanos());
                g.writeNumberField("alternative_success", t.decision().alternative().get().successProbability());
                g.writeStringField("alternative", t.decision().alternativeSummary());
            }
            g.writeArrayFieldStart("routes");
            for (TracedRoute r : t.routes()) {
                g.writeStartObject();
                g.writeStringField("kind", r.kind().traceName());
                g.writeStringField("owner", r.owner());
                g.writeNumberField("from", r.fromIndex());
                g.writeNumberField("to", r.toIndex());
                g.writeNumberField("bytes", r.bytes());
                g.writeStringField("outcome", r.outcome().traceName());
                if (r.refusal().isPresent()) {
                    g.writeStringField("refusal", r.refusal().get().traceName());
                }
                g.writeNumberField("ready_after_ns", r.readyAfterNanos());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeNumberField("routes_omitted", t.routesOmitted());
            g.writeArrayFieldStart("replans");
            for (AdmissionRefusal r : t.replans()) {
                g.writeString(r.traceName());
            }
            g.writeEndArray();
            writeOptional(g, t);
            g.writeNumberField("restored", t.restoredKeys());
            g.writeStringField("stop", t.stop().traceName());
            g.writeNumberField("ready_ns", t.readyNanos());
            g.writeNumberField("drain_pending", t.drainPending());
            g.writeEndObject();
        }
        buf.write('\n');
        return buf.toByteArray();
    }

    private void closeQuietly() {
        try {
            out.close();
        } catch (IOException ignored) {
            // already failing; counted
        }
        out = null;
    }

    @Override
    public synchronized void close() {
        if (out != null) {
            closeQuietly();
        }
    }
}
