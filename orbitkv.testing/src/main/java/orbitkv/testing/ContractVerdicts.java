package orbitkv.testing;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * The verdicts of one harness run against the frozen performance contracts of docs/performance.md (issue 37 item 1):
 * the one place that compares a figure with its threshold, names a collection failure, prints the PASS/FAIL line,
 * formats the table and turns any non-PASS into a failure. Every harness uses it; none compares on its own.
 *
 * <p>A verdict is {@link Verdict#PASS}, {@link Verdict#FAIL} or {@link Verdict#COLLECTION_FAILED}: a figure that is
 * not a finite number, too few samples or an invalid run is a collection failure, never a silent pass, and a run
 * that produced no verdict at all is one too ({@link #enforce()}). With {@code -Dbench.verdicts=FILE} every cell is
 * also appended to FILE as one tab-separated line, which {@code scripts/bench qualify} renders as one table with
 * {@link #main(String[])}.
 */
public final class ContractVerdicts {
    /** The system property naming the file that collects every cell of a {@code scripts/bench qualify} sitting. */
    public static final String FILE_PROPERTY = "bench.verdicts";

    /** PASS, FAIL, or COLLECTION FAILED (an invalid run, too few samples, no figure): only PASS passes. */
    public enum Verdict {
        PASS, FAIL, COLLECTION_FAILED;

        public String label() {
            return this == COLLECTION_FAILED ? "COLLECTION FAILED" : name();
        }

        static Verdict ofLabel(String s) {
            return Verdict.valueOf(s.replace(' ', '_'));
        }
    }

    /** One contract cell: what is judged, its frozen threshold, the figure, its spread, the verdict and a note. */
    public record Cell(String harness, String contract, String threshold, String figure, String spread, Verdict verdict, String note) {
        public Cell {
            for (String s : List.of(harness, contract, threshold, figure, spread, note)) {
                if (s.contains("\t") || s.contains("\n")) {
                    throw new IllegalArgumentException("a verdict cell holds no tab or newline: " + s);
                }
            }
        }

        /** The line a harness prints: verdict first, so a reader (and grep) finds every FAIL. */
        public String line() {
            return String.format(Locale.ROOT, "%-17s %s: %s (threshold %s%s)%s", verdict.label(), contract, figure, threshold,
                    spread.isEmpty() ? "" : "; spread " + spread, note.isEmpty() ? "" : " [" + note + "]");
        }

        String tsv() {
            return String.join("\t", harness, contract, threshold, figure, spread, verdict.label(), note);
        }

        static Cell parse(String line) {
            String[] f = line.split("\t", -1);
            if (f.length != 7) {
                throw new IllegalArgumentException("a verdict line has 7 tab-separated fields, got " + f.length + ": " + line);
            }
            return new Cell(f[0], f[1], f[2], f[3], f[4], Verdict.ofLabel(f[5]), f[6]);
        }
    }

    private final String harness;
    private final Consumer<String> out;
    private final List<Cell> cells = new ArrayList<>();

    /** Verdicts of {@code harness}; every cell's line goes to {@code out} (a harness's report) as it is judged. */
    public ContractVerdicts(String harness, Consumer<String> out) {
        this.harness = harness;
        this.out = out;
    }

    /** PASS when {@code figure >= threshold}; a figure that is not finite is a collection failure. */
    public Cell atLeast(String contract, double threshold, double figure, String unit, String spread) {
        return judge(contract, "≥ " + num(threshold) + unit, figure, unit, spread, figure >= threshold);
    }

    /** PASS when {@code figure <= threshold}; a figure that is not finite is a collection failure. */
    public Cell atMost(String contract, double threshold, double figure, String unit, String spread) {
        return judge(contract, "≤ " + num(threshold) + unit, figure, unit, spread, figure <= threshold);
    }

    /** PASS when {@code |figure| <= tolerance}, for a relative deviation given in percent. */
    public Cell withinPercent(String contract, double tolerancePercent, double figurePercent, String spread) {
        return judge(contract, "within ±" + num(tolerancePercent) + " %", figurePercent, " %", spread,
                Math.abs(figurePercent) <= tolerancePercent);
    }

    /** A check that is not one number against one threshold (for example several pairs): the caller states both. */
    public Cell check(String contract, String threshold, String figure, String spread, boolean pass) {
        return add(new Cell(harness, contract, threshold, figure, spread, pass ? Verdict.PASS : Verdict.FAIL, ""));
    }

    /** PASS when at least {@code needed} samples were collected, otherwise COLLECTION FAILED naming both. */
    public Cell collected(String contract, long got, long needed, String what) {
        return add(new Cell(harness, contract, "≥ " + needed + " " + what, got + " " + what, "",
                got >= needed ? Verdict.PASS : Verdict.COLLECTION_FAILED, got >= needed ? "" : "too few samples"));
    }

    /** A contract this run could not judge: an invalid run, a failed collection, a missing arm. */
    public Cell collectionFailed(String contract, String threshold, String why) {
        return add(new Cell(harness, contract, threshold, "-", "", Verdict.COLLECTION_FAILED, why));
    }

    private Cell judge(String contract, String threshold, double figure, String unit, String spread, boolean pass) {
        if (!Double.isFinite(figure)) {
            return add(new Cell(harness, contract, threshold, String.valueOf(figure), spread, Verdict.COLLECTION_FAILED,
                    "no finite figure"));
        }
        return add(new Cell(harness, contract, threshold, num(figure) + unit, spread, pass ? Verdict.PASS : Verdict.FAIL, ""));
    }

    private Cell add(Cell c) {
        cells.add(c);
        out.accept(c.line());
        return c;
    }

    public List<Cell> cells() {
        return List.copyOf(cells);
    }

    /** True when there is at least one cell and every cell passed. */
    public boolean passed() {
        return !cells.isEmpty() && cells.stream().allMatch(c -> c.verdict() == Verdict.PASS);
    }

    /**
     * Prints the summary, appends the cells to {@code -Dbench.verdicts} if set, and throws {@link AssertionError}
     * naming every cell that did not pass (so the harness's JVM, and Maven, exit non-zero). No cell at all is a
     * collection failure.
     */
    public void enforce() {
        enforce(harness, cells, out);
    }

    /**
     * {@link #enforce()} over cells judged by several {@link ContractVerdicts} of one run (a harness judging each
     * size on its own), printing the summary to {@code out}.
     */
    public static void enforce(String harness, List<Cell> cells, Consumer<String> out) {
        List<Cell> all = cells.isEmpty()
                ? List.of(new Cell(harness, "any contract of " + harness, "at least one verdict", "-", "", Verdict.COLLECTION_FAILED,
                        "the run produced no verdict"))
                : cells;
        String file = System.getProperty(FILE_PROPERTY);
        if (file != null && !file.isBlank()) {
            append(Path.of(file), all);
        }
        List<Cell> failed = all.stream().filter(c -> c.verdict() != Verdict.PASS).toList();
        out.accept(String.format(Locale.ROOT, "%s: %d of %d contract cells PASS", harness, all.size() - failed.size(), all.size()));
        if (!failed.isEmpty()) {
            StringBuilder b = new StringBuilder(harness + ": " + failed.size() + " contract cell(s) did not pass:");
            failed.forEach(c -> b.append("\n  ").append(c.line()));
            throw new AssertionError(b.toString());
        }
    }

    /** Appends cells to a verdict file (one tab-separated line each). */
    public static void append(Path file, List<Cell> cells) {
        StringBuilder b = new StringBuilder();
        cells.forEach(c -> b.append(c.tsv()).append('\n'));
        try {
            Files.writeString(file, b, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads a verdict file written by {@link #append}. */
    public static List<Cell> read(Path file) throws IOException {
        return Files.readAllLines(file, StandardCharsets.UTF_8).stream().filter(l -> !l.isBlank()).map(Cell::parse).toList();
    }

    /** The one table: contract, threshold, figure, spread, verdict, then the conditions and a closing count. */
    public static String table(List<Cell> cells, List<String> conditions) {
        StringBuilder b = new StringBuilder("| harness | contract | threshold | figure | spread | verdict | note |\n");
        b.append("|---|---|---|---|---|---|---|\n");
        for (Cell c : cells) {
            b.append(String.join(" | ", "| " + c.harness(), c.contract(), c.threshold(), c.figure(), dash(c.spread()),
                    "**" + c.verdict().label() + "**", dash(c.note()) + " |")).append('\n');
        }
        conditions.forEach(line -> b.append("conditions: ").append(line).append('\n'));
        long pass = cells.stream().filter(c -> c.verdict() == Verdict.PASS).count();
        b.append(String.format(Locale.ROOT, "qualify: %d of %d contract cells PASS%s%n", pass, cells.size(),
                cells.isEmpty() ? " (no cell: COLLECTION FAILED)" : pass == cells.size() ? "" : " -> FAIL"));
        return b.toString();
    }

    /**
     * {@code java orbitkv.testing.ContractVerdicts FILE [CONDITION...]}: prints the table of FILE with the conditions;
     * exits 0 when every cell passed, 1 otherwise (also for an empty or missing file), 2 on a malformed line.
     */
    public static void main(String[] args) {
        System.exit(render(args, System.out));
    }

    /** {@link #main} without the exit, for tests. */
    public static int render(String[] args, PrintStream out) {
        if (args.length < 1) {
            out.println("usage: ContractVerdicts FILE [CONDITION...]");
            return 2;
        }
        List<Cell> cells;
        try {
            Path p = Path.of(args[0]);
            cells = Files.exists(p) ? read(p) : List.of();
        } catch (IOException | IllegalArgumentException e) {
            out.println("qualify: unreadable verdict file " + args[0] + ": " + e.getMessage());
            return 2;
        }
        out.print(table(cells, List.of(args).subList(1, args.length)));
        return !cells.isEmpty() && cells.stream().allMatch(c -> c.verdict() == Verdict.PASS) ? 0 : 1;
    }

    private static String dash(String s) {
        return s.isEmpty() ? "-" : s;
    }

    /** A figure or threshold as printed: three significant decimals at most, no trailing zeros. */
    public static String num(double v) {
        return new java.math.BigDecimal(String.format(Locale.ROOT, "%.3f", v)).stripTrailingZeros().toPlainString();
    }
}
