package orbitkv.conformance.perf;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.UUID;
import java.util.stream.Stream;
import orbitkv.conformance.perf.IsolationHarness.Arm;
import orbitkv.conformance.perf.IsolationHarness.Medium;
import orbitkv.conformance.perf.IsolationHarness.Op;
import orbitkv.conformance.perf.IsolationHarness.Round;
import orbitkv.conformance.perf.IsolationHarness.RunResult;

/**
 * The isolation matrix's resume directory ({@code bench.isolation.resumeDir}): the formal matrix (≈ 6 h) spans more
 * than one sitting, so every collected pair (both runs, valid or not; never a pair with a collection failure, which
 * the next sitting runs again) is kept as files and loaded instead of run again. Layout:
 * <pre>
 *   matrix.properties                        the settings' fingerprint (written by the first sitting)
 *   DRAM-pair1/pair.properties               fingerprint, recorded time, medium, pair, per run: label, arm, order,
 *                                            valid, validity summary, peer publications
 *   DRAM-pair1/DRAM-pair1-idle/rounds.csv    the run's rounds ({@link #ROUNDS_HEADER}), warm-up rounds included
 * </pre>
 * A pair directory appears whole or not at all (written under a temporary name, then renamed), so a sitting stopped
 * mid-write leaves nothing that loads. The fingerprint is every setting that shapes a figure
 * ({@link IsolationHarness.Settings#fingerprint()}); a directory of another fingerprint is refused by name
 * ({@link IllegalStateException} naming both), never mixed into one verdict.
 */
final class IsolationResume {
    static final String MATRIX = "matrix.properties";
    static final String PAIR = "pair.properties";
    static final String ROUNDS = "rounds.csv";
    /** Columns of a run's rounds: the phase, then start and end of every {@link Op} (empty when off), served counts. */
    static final String ROUNDS_HEADER = "round,phase,start_ns," + String.join(",", Stream.of(Op.values())
            .map(op -> op.name().toLowerCase(Locale.ROOT) + "_start_ns," + op.name().toLowerCase(Locale.ROOT) + "_end_ns").toList())
            + ",ssd_served,peer_served";

    /** One pair read back: its runs (baseline first) and when it was recorded. */
    record Loaded(RunResult[] pair, String recorded) {}

    private final Path dir;
    private final String fingerprint;

    private IsolationResume(Path dir, String fingerprint) {
        this.dir = dir;
        this.fingerprint = fingerprint;
    }

    /**
     * Opens (creating) {@code dir} for a matrix of {@code fingerprint}; refuses a directory holding a matrix or a pair
     * of another fingerprint.
     */
    static IsolationResume open(Path dir, String fingerprint) throws IOException {
        Files.createDirectories(dir);
        Path matrix = dir.resolve(MATRIX);
        if (Files.exists(matrix)) {
            refuseOther(matrix, read(matrix).getProperty("fingerprint"), fingerprint);
        }
        try (Stream<Path> pairs = Files.list(dir)) {
            for (Path pair : pairs.map(d -> d.resolve(PAIR)).filter(Files::exists).toList()) {
                refuseOther(pair, read(pair).getProperty("fingerprint"), fingerprint);
            }
        }
        if (!Files.exists(matrix)) { // only after every check: a refused open leaves the directory as it was
            Properties p = new Properties();
            p.setProperty("fingerprint", fingerprint);
            p.setProperty("created", Instant.now().toString());
            write(matrix, p);
        }
        return new IsolationResume(dir, fingerprint);
    }

    private static void refuseOther(Path file, String recorded, String fingerprint) {
        if (!fingerprint.equals(recorded)) {
            throw new IllegalStateException("isolation resume directory: " + file + " was recorded with fingerprint [" + recorded
                    + "], this run's settings have fingerprint [" + fingerprint + "]: pairs of two matrices never share a verdict "
                    + "(run with the recorded settings, or name another bench.isolation.resumeDir)");
        }
    }

    Path dir() {
        return dir;
    }

    /** The recorded pair {@code pair} (0-based) of {@code medium}, or null when this directory does not hold it. */
    Loaded load(Medium medium, int pair) throws IOException {
        Path d = dir.resolve(pairName(medium, pair));
        if (!Files.exists(d.resolve(PAIR))) {
            return null;
        }
        Properties p = read(d.resolve(PAIR));
        refuseOther(d.resolve(PAIR), p.getProperty("fingerprint"), fingerprint);
        String recorded = p.getProperty("recorded");
        RunResult[] out = new RunResult[2];
        for (int i = 0; i < 2; i++) {
            String k = "run." + i + ".";
            String label = p.getProperty(k + "label");
            List<Round> rounds = parseRounds(Files.readAllLines(d.resolve(label).resolve(ROUNDS), StandardCharsets.UTF_8));
            out[i] = RunResult.recorded(medium, pair, Arm.valueOf(p.getProperty(k + "arm")), Integer.parseInt(p.getProperty(k + "order")),
                    rounds, Long.parseLong(p.getProperty(k + "peerPublications")), new RunResult.Recorded(d.toString(), recorded,
                            Boolean.parseBoolean(p.getProperty(k + "valid")), p.getProperty(k + "validity")));
        }
        return new Loaded(out, recorded);
    }

    /** Keeps a collected pair (baseline first); a pair with a collection failure is refused (it is run again). */
    void store(RunResult[] pair) throws IOException {
        if (pair[0].failed() || pair[1].failed()) {
            throw new IllegalArgumentException("a pair with a collection failure is not kept: " + pair[0].label() + " / " + pair[1].label());
        }
        Path target = dir.resolve(pairName(pair[0].medium(), pair[0].pair()));
        Path tmp = Files.createDirectories(dir.resolve(target.getFileName() + ".partial-" + UUID.randomUUID()));
        Properties p = new Properties();
        p.setProperty("fingerprint", fingerprint);
        p.setProperty("recorded", Instant.now().toString());
        p.setProperty("medium", pair[0].medium().name());
        p.setProperty("pair", Integer.toString(pair[0].pair()));
        for (int i = 0; i < 2; i++) {
            RunResult r = pair[i];
            String k = "run." + i + ".";
            p.setProperty(k + "label", r.label());
            p.setProperty(k + "arm", r.arm().name());
            p.setProperty(k + "order", Integer.toString(r.order()));
            p.setProperty(k + "valid", Boolean.toString(r.valid()));
            p.setProperty(k + "validity", r.validitySummary());
            p.setProperty(k + "peerPublications", Long.toString(r.peerPublications()));
            Path runDir = Files.createDirectories(tmp.resolve(r.label()));
            Files.write(runDir.resolve(ROUNDS), csv(r.rounds()), StandardCharsets.UTF_8);
        }
        write(tmp.resolve(PAIR), p);
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
    }

    static String pairName(Medium medium, int pair) {
        return medium + "-pair" + (pair + 1);
    }

    // ------------------------------------------------------------------ rounds.csv

    /** Header and one line per round ({@link #ROUNDS_HEADER}). */
    static List<String> csv(List<Round> rounds) {
        List<String> lines = new ArrayList<>(List.of(ROUNDS_HEADER));
        for (Round x : rounds) {
            StringBuilder b = new StringBuilder().append(x.index()).append(',').append(x.warmup() ? "warmup" : "measured").append(',')
                    .append(x.startNs());
            for (Op op : Op.values()) {
                boolean on = x.measures(op);
                b.append(',').append(on ? Long.toString(x.opStartNs()[op.ordinal()]) : "").append(',')
                        .append(on ? Long.toString(x.opEndNs()[op.ordinal()]) : "");
            }
            lines.add(b.append(',').append(x.ssdServed()).append(',').append(x.peerServed()).toString());
        }
        return lines;
    }

    /** The rounds of {@link #csv}'s lines (header first). */
    static List<Round> parseRounds(List<String> lines) {
        if (lines.isEmpty() || !lines.getFirst().equals(ROUNDS_HEADER)) {
            throw new IllegalStateException("rounds file header is not [" + ROUNDS_HEADER + "]: " + (lines.isEmpty() ? "empty" : lines.getFirst()));
        }
        List<Round> out = new ArrayList<>();
        int ops = Op.values().length;
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",", -1);
            long[] s = new long[ops];
            long[] e = new long[ops];
            for (int i = 0; i < ops; i++) {
                s[i] = f[3 + 2 * i].isEmpty() ? 0 : Long.parseLong(f[3 + 2 * i]);
                e[i] = f[4 + 2 * i].isEmpty() ? 0 : Long.parseLong(f[4 + 2 * i]);
            }
            out.add(new Round(Integer.parseInt(f[0]), f[1].equals("warmup"), Long.parseLong(f[2]), s, e, Integer.parseInt(f[3 + 2 * ops]),
                    Integer.parseInt(f[4 + 2 * ops])));
        }
        return out;
    }

    private static Properties read(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        return p;
    }

    private static void write(Path file, Properties p) throws IOException {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            p.store(w, "IsolationHarness resume record (bench.isolation.resumeDir)");
        }
    }

    /** For a report line: the recorded pairs' names in this directory. */
    List<String> recordedPairs() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(d -> Files.exists(d.resolve(PAIR))).map(d -> d.getFileName().toString()).sorted().toList();
        }
    }
}
