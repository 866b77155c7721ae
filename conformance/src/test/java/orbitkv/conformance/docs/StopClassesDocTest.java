package orbitkv.conformance.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import orbitkv.recovery.PrefixStop;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * docs/api.md's stop classes (issue 35 G6): every stop a restore or query can name is tagged {@code miss} or
 * {@code retryable} exactly once; the names are the planner's {@link PrefixStop} values plus those the restore header
 * adds (orbitkv.server.restore's RestoreNotes: {@code response-memory}, {@code receive-credits}, {@code corrupt-dram},
 * {@code corrupt-ssd}) and the local tier stops the STOP table documents ({@code pins-exhausted}, {@code closed}).
 */
@Tag("unit")
class StopClassesDocTest {
    /** Stop names of the restore header that are not PrefixStop trace names (RestoreNotes.stop, the STOP table). */
    private static final List<String> HEADER_ONLY = List.of("response-memory", "receive-credits", "corrupt-dram", "corrupt-ssd",
            "pins-exhausted", "closed");

    @Test
    @DisplayName("G6 every stop of the planner's enum and the restore header has exactly one class, miss or retryable, in docs/api.md")
    void everyStopHasAClass() throws IOException {
        Path api = MarkdownTable.root().resolve("docs/api.md");
        Map<String, String> classes = new LinkedHashMap<>();
        for (List<String> row : MarkdownTable.rows(api, "stop-classes")) {
            String stop = row.get(0).replace("`", "");
            assertThat(classes.put(stop, row.get(1))).as("%s listed once", stop).isNull();
        }
        Set<String> expected = new TreeSet<>(HEADER_ONLY);
        Arrays.stream(PrefixStop.values()).map(PrefixStop::traceName).forEach(expected::add);
        assertThat(new TreeSet<>(classes.keySet())).isEqualTo(expected);
        classes.forEach((stop, c) -> assertThat(c).as(stop)
                .isEqualTo(stop.equals("complete") ? "complete" : c.equals("miss") ? "miss" : "retryable"));
        assertThat(classes.values()).contains("miss", "retryable");

        // every name of the STOP table (the rows after "`STOP` says why the prefix ended:") is classified
        List<String> lines = Files.readAllLines(api);
        int from = lines.indexOf("`STOP` says why the prefix ended:");
        assertThat(from).isPositive();
        Pattern name = Pattern.compile("`([a-z-]+)`");
        Set<String> documented = new TreeSet<>();
        for (String line : lines.subList(from + 3, lines.size())) {
            if (!line.startsWith("|")) {
                break;
            }
            Matcher m = name.matcher(line.substring(1, line.indexOf('|', 1)));
            while (m.find()) {
                documented.add(m.group(1));
            }
        }
        assertThat(documented).hasSizeGreaterThan(15);
        assertThat(classes.keySet()).containsAll(documented);
    }
}
