package orbitkv.conformance.perf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;

/**
 * Where one harness run writes its raw samples, tables and plots: outside the working tree, under
 * {@code ${java.io.tmpdir}/orbitkv-bench/<run-id>/} (or {@code -Dbench.out=DIR}), never in the checkout. Every line a
 * harness prints for the report also goes to {@code report.txt} there.
 */
public final class BenchRun {
    private final Path dir;
    private final String id;

    private BenchRun(Path dir, String id) {
        this.dir = dir;
        this.id = id;
    }

    /** A new run directory named {@code <UTC time>-<label>}. */
    public static BenchRun create(String label) {
        String id = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC).format(Instant.now()) + "-" + label;
        String base = System.getProperty("bench.out");
        Path root = base != null ? Path.of(base) : Path.of(System.getProperty("java.io.tmpdir"), "orbitkv-bench");
        try {
            Path dir = Files.createDirectories(root.resolve(id));
            return new BenchRun(dir, id);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Path dir() {
        return dir;
    }

    public String id() {
        return id;
    }

    /** Prints a report line and appends it to {@code report.txt}. */
    public void report(String line) {
        System.out.println(line);
        append("report.txt", line + "\n");
    }

    /** Writes a CSV file (header + rows) of raw samples. */
    public Path csv(String name, String header, List<String> rows) {
        Path p = dir.resolve(name);
        try {
            Files.writeString(p, header + "\n" + String.join("\n", rows) + (rows.isEmpty() ? "" : "\n"), StandardCharsets.UTF_8);
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void append(String name, String text) {
        try {
            Files.writeString(dir.resolve(name), text, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
