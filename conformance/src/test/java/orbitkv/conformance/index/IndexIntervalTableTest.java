package orbitkv.conformance.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import orbitkv.testing.TableRows;
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
        return TableRows.read(TABLE, IndexIntervalTableTest.class.getResourceAsStream(TABLE), TableRows.BARS, 5).stream()
                .map(t -> new Row(t.line(), t.column(0), t.column(1), t.column(2), t.column(3), t.column(4), t.rules()))
                .toList();
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
