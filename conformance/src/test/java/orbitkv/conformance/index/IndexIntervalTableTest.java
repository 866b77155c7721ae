package orbitkv.conformance.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs the receiver interval-rule table {@code tables/index/receiver-rules.table} against a GlobalIndex
 * through exported API only. Each row: {@code steps | outcome | cursor | rows | coverage # RULE-IDS}; see
 * the table's header and {@link ReceiverScript} for the step language.
 */
@Tag("unit")
class IndexIntervalTableTest {
    static final String TABLE = "/tables/index/receiver-rules.table";

    record Row(int line, String steps, String outcome, String cursor, String rows, String coverage, String rules) {
    }

    static List<Row> rows() throws IOException {
        List<Row> rows = new ArrayList<>();
        try (InputStream in = IndexIntervalTableTest.class.getResourceAsStream(TABLE)) {
            assertThat(in).as("table resource " + TABLE).isNotNull();
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            String line;
            int n = 0;
            while ((line = r.readLine()) != null) {
                n++;
                String t = line.strip();
                if (t.isEmpty() || t.startsWith("#")) {
                    continue;
                }
                int hash = t.indexOf(" # ");
                if (hash < 0) {
                    throw new IllegalArgumentException(TABLE + ":" + n + ": row must end with '# RULE-ID ...'");
                }
                String[] cols = t.substring(0, hash).split("\\|");
                if (cols.length != 5) {
                    throw new IllegalArgumentException(TABLE + ":" + n + ": expected 5 columns, got " + cols.length);
                }
                rows.add(new Row(n, cols[0].strip(), cols[1].strip(), cols[2].strip(), cols[3].strip(),
                        cols[4].strip(), t.substring(hash + 3).strip()));
            }
        }
        return rows;
    }

    @Test
    @DisplayName("DELTA-7 DELTA-8 DELTA-9 SNAP-7 the receiver table has >= 40 rows, each citing a rule ID")
    void tableIsLargeEnoughAndCitesRules() throws IOException {
        List<Row> rows = rows();
        assertThat(rows).hasSizeGreaterThanOrEqualTo(40);
        assertThat(rows).allSatisfy(r -> assertThat(r.rules()).matches("[A-Z]+-\\d+.*"));
    }

    @TestFactory
    Stream<DynamicTest> receiverRules() throws IOException {
        return rows().stream().map(row -> DynamicTest.dynamicTest(
                row.rules() + " (line " + row.line() + "): " + row.steps(), () -> check(row)));
    }

    private static void check(Row row) {
        ReceiverScript script = new ReceiverScript();
        String outcome = script.run(row.steps());
        String where = TABLE + ":" + row.line() + " [" + row.rules() + "] ";
        assertThat(outcome).as(where + "outcome").isEqualTo(row.outcome());
        assertThat(script.cursor()).as(where + "installed cursor").isEqualTo(row.cursor());
        if (!row.rows().equals("*")) {
            List<String> keys = Arrays.stream(row.rows().split("\\s+")).map(s -> s.substring(0, s.indexOf(':'))).toList();
            assertThat(script.rows(keys)).as(where + "rows").isEqualTo(row.rows());
        }
        assertThat(script.coverage()).as(where + "coverage").isEqualTo(row.coverage());
    }
}
