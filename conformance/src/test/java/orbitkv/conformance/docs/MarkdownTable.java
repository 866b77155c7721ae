package orbitkv.conformance.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads one Markdown table that a reviewed document delimits with {@code <!-- NAME:begin -->} and
 * {@code <!-- NAME:end -->}: the document is the source of truth, the test only pins it.
 */
public final class MarkdownTable {
    private MarkdownTable() {}

    /** The repository root, passed by Surefire as {@code orbitkv.root}. */
    public static Path root() {
        String root = System.getProperty("orbitkv.root");
        if (root == null) {
            throw new IllegalStateException("system property orbitkv.root is not set (conformance/pom.xml sets it)");
        }
        return Path.of(root).toAbsolutePath().normalize();
    }

    /** Data rows (header and separator dropped), each as trimmed cells. */
    public static List<List<String>> rows(Path document, String name) {
        List<String> lines;
        try {
            lines = Files.readAllLines(document);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int begin = lines.indexOf("<!-- " + name + ":begin -->");
        int end = lines.indexOf("<!-- " + name + ":end -->");
        if (begin < 0 || end < begin) {
            throw new IllegalStateException(document + " has no table delimited by '" + name + ":begin/end'");
        }
        List<List<String>> rows = new ArrayList<>();
        int tableLine = 0;
        for (String line : lines.subList(begin + 1, end)) {
            if (!line.startsWith("|")) {
                continue;
            }
            tableLine++;
            if (tableLine <= 2) {
                continue; // header and |---| separator
            }
            String inner = line.substring(1, line.lastIndexOf('|'));
            rows.add(Arrays.stream(inner.split("\\|", -1)).map(String::trim).toList());
        }
        if (rows.isEmpty()) {
            throw new IllegalStateException(document + " table '" + name + "' has no rows");
        }
        return rows;
    }

    /** A comma-separated cell as a list; an em dash or empty cell is the empty list. */
    public static List<String> list(String cell) {
        if (cell.isEmpty() || cell.equals("—") || cell.equals("-")) {
            return List.of();
        }
        return Arrays.stream(cell.split(",")).map(String::trim).toList();
    }
}
