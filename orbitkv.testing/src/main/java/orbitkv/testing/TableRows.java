package orbitkv.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one reader of the test tables (issue 34 item 6): {@code *.table} files whose data rows are columns, then
 * {@code #} and the rule IDs the row checks (for example {@code a | b | c  # DELTA-8 why}). Blank lines and lines
 * starting with {@code #} are comments. The row comment starts at the first {@code #} with whitespace on both
 * sides, so a {@code #} inside a token ({@code (0,4]#4}) stays in its column. Every row must cite its rules and
 * have exactly the table's number of columns; a malformed row fails the reading with its file and line. Each row
 * keeps its 1-based line, and {@link Row#name()} ({@code RULES — file:line}) is the dynamic test's name, so a
 * failing row names its rules and where it is.
 */
public final class TableRows {
    /** Columns separated by {@code |}. */
    public static final Pattern BARS = Pattern.compile("\\|");
    /** Columns separated by whitespace. */
    public static final Pattern WHITESPACE = Pattern.compile("\\s+");
    private static final Pattern COMMENT = Pattern.compile("\\s#\\s");

    private TableRows() {}

    /** One data row: its file, 1-based line, columns (stripped), and the rule IDs and comment after {@code #}. */
    public record Row(String file, int line, List<String> columns, String rules) {
        public String column(int i) {
            return columns.get(i);
        }

        /** {@code RULES — file:line}: the row's test name. */
        public String name() {
            return rules + " — " + file + ":" + line;
        }
    }

    /** The {@code |}-separated rows of the file at {@code path}. */
    public static List<Row> read(Path path, int columnCount) throws IOException {
        return parse(path.getFileName().toString(), Files.readAllLines(path, StandardCharsets.UTF_8), BARS, columnCount);
    }

    /**
     * The rows of a class-path resource the caller opened ({@code in}, for example {@code getClass()
     * .getResourceAsStream(name)}: a test module's resources are readable by its own classes only); null fails naming
     * {@code file}. Closes {@code in}.
     */
    public static List<Row> read(String file, InputStream in, Pattern separator, int columnCount) {
        if (in == null) {
            throw new IllegalArgumentException("no table resource " + file);
        }
        try (in) {
            String name = file.substring(file.lastIndexOf('/') + 1);
            return parse(name, new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList(), separator, columnCount);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The data rows of {@code lines} (of {@code file}, for messages and names). */
    public static List<Row> parse(String file, List<String> lines, Pattern separator, int columnCount) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            Matcher m = COMMENT.matcher(line);
            if (!m.find()) {
                throw new IllegalArgumentException(file + ":" + (i + 1) + ": every row must end with '# RULE-ID ...'");
            }
            int hash = m.start() + 1;
            List<String> cols = new ArrayList<>();
            for (String c : separator.split(line.substring(0, hash).strip())) {
                cols.add(c.strip());
            }
            if (cols.size() != columnCount) {
                throw new IllegalArgumentException(file + ":" + (i + 1) + ": expected " + columnCount + " columns, got " + cols.size());
            }
            rows.add(new Row(file, i + 1, List.copyOf(cols), line.substring(hash + 1).strip()));
        }
        return rows;
    }
}
