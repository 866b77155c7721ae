package orbitkv.conformance.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import orbitkv.conformance.docs.MarkdownTable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 34 item 4 (BND-6): docs/api.md's option table (between {@code <!-- options:begin -->} and
 * {@code <!-- options:end -->}) is the {@code Setting} enum, exactly, both ways: every setting has one row with its
 * {@code --name}, its kind (the unit: SIZE, MS, COUNT, TEXT, TEXT_LIST, FLAG) and its default ({@code —} for none,
 * else the default in backticks), and every row is a setting. The meaning column may say more than the enum's doc
 * line but may not be empty. Setting.java is read as source: {@code orbitkv.server} exports nothing.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OptionTableDriftTest {
    static final String PAGE = "docs/api.md";
    static final String TABLE = "options";
    private static final String NO_DEFAULT = "—";

    /** One row of the option table as written, with its line in docs/api.md. */
    record Row(String option, String kind, String defaultCell, String meaning, int line) {}

    private static CodeIndex code;
    private static List<Row> rows;

    @BeforeAll
    static void read() {
        code = new CodeIndex(MarkdownTable.root());
        rows = rows(CodeIndex.read(MarkdownTable.root().resolve(PAGE)));
    }

    @Test
    @DisplayName("BND-6 issue 34 docs/api.md's option table equals the Setting list: the same names, kinds and defaults, both ways")
    void optionTableEqualsSettings() {
        assertThat(differences(rows, code.settings)).as("%s option table vs %s (fix the table: a row per Setting, "
                + "`--name` | KIND | `default` or — | meaning)", PAGE, CodeIndex.SETTING_SOURCE).isEmpty();
        assertThat(rows).hasSize(code.settings.size());
    }

    @Test
    @DisplayName("BND-6 a setting's unit is in its name: -ms options are MS, -bytes options SIZE, and the reverse for MS")
    void unitsAreInTheNames() {
        List<String> wrong = new ArrayList<>();
        for (CodeIndex.SettingEntry s : code.settings) {
            boolean ms = s.option().matches(".*-ms(-.*)?$");
            boolean bytes = s.option().matches("(.*-)?bytes(-.*)?$");
            if (ms != s.kind().equals("MS") || (bytes && !s.kind().equals("SIZE"))) {
                wrong.add(CodeIndex.SETTING_SOURCE + ":" + s.line() + ": --" + s.option() + " is " + s.kind());
            }
        }
        assertThat(wrong).isEmpty();
    }

    @Test
    @DisplayName("the drift check names a missing row, an undocumented row, a wrong kind and a wrong default by line")
    void driftIsNamed() {
        List<CodeIndex.SettingEntry> settings = List.of(
                new CodeIndex.SettingEntry("A_MS", "a-ms", "MS", "10", "a", 1),
                new CodeIndex.SettingEntry("B", "b", "TEXT", null, "b", 2),
                new CodeIndex.SettingEntry("C", "c", "SIZE", "1MiB", "c", 3),
                new CodeIndex.SettingEntry("D", "d", "COUNT", "4", "d", 4));
        String page = "x\n<!-- options:begin -->\n| option | kind | default | meaning |\n|---|---|---|---|\n"
                + "| `--a-ms` | MS | `10` | a |\n| `--b` | TEXT | `x` | b |\n| `--c` | COUNT | `1MiB` | c |\n"
                + "| `--e` | FLAG | `false` | e |\n<!-- options:end -->\n";
        assertThat(differences(rows(page), settings)).containsExactly(
                "docs/api.md:6: --b default `x`, Setting.java:2 has none (—)",
                "docs/api.md:7: --c kind COUNT, Setting.java:3 has SIZE",
                "docs/api.md:8: --e has no Setting entry",
                "--d (Setting.java:4) has no row in docs/api.md's option table");
    }

    /** Every difference between the table and the settings, table rows first (in page order), then missing rows. */
    static List<String> differences(List<Row> table, List<CodeIndex.SettingEntry> settings) {
        Map<String, CodeIndex.SettingEntry> byOption = new LinkedHashMap<>();
        settings.forEach(s -> byOption.put("--" + s.option(), s));
        List<String> out = new ArrayList<>();
        Map<String, Row> seen = new LinkedHashMap<>();
        for (Row r : table) {
            String at = PAGE + ":" + r.line() + ": " + r.option();
            CodeIndex.SettingEntry s = byOption.get(r.option());
            if (seen.put(r.option(), r) != null) {
                out.add(at + " is listed twice");
            } else if (s == null) {
                out.add(at + " has no Setting entry");
            } else {
                String expected = s.defaultValue() == null ? NO_DEFAULT : "`" + s.defaultValue() + "`";
                if (!r.kind().equals(s.kind())) {
                    out.add(at + " kind " + r.kind() + ", Setting.java:" + s.line() + " has " + s.kind());
                }
                if (!r.defaultCell().equals(expected)) {
                    out.add(at + " default " + r.defaultCell() + ", Setting.java:" + s.line() + " has "
                            + (s.defaultValue() == null ? "none (—)" : expected));
                }
                if (r.meaning().isBlank()) {
                    out.add(at + " has no meaning");
                }
            }
        }
        byOption.forEach((flag, s) -> {
            if (!seen.containsKey(flag)) {
                out.add(flag + " (Setting.java:" + s.line() + ") has no row in " + PAGE + "'s option table");
            }
        });
        return out;
    }

    /** The option table's data rows: {@code | `--name` | KIND | default | meaning |}, the meaning may hold pipes in code. */
    static List<Row> rows(String page) {
        String[] lines = page.split("\n", -1);
        List<Row> out = new ArrayList<>();
        int begin = -1;
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].equals("<!-- " + TABLE + ":begin -->")) {
                begin = i;
            } else if (lines[i].equals("<!-- " + TABLE + ":end -->")) {
                if (begin < 0) {
                    break;
                }
                return out;
            } else if (begin >= 0 && lines[i].startsWith("| `--")) {
                String[] cells = lines[i].substring(1).split("\\|", 4);
                if (cells.length < 4) {
                    throw new IllegalStateException(PAGE + ":" + (i + 1) + ": an option row needs four cells");
                }
                String option = cells[0].trim();
                out.add(new Row(option.substring(1, option.length() - 1), cells[1].trim(), cells[2].trim(),
                        cells[3].substring(0, Math.max(0, cells[3].lastIndexOf('|'))).trim(), i + 1));
            }
        }
        throw new IllegalStateException(PAGE + " has no table between <!-- " + TABLE + ":begin --> and <!-- " + TABLE + ":end -->");
    }
}
