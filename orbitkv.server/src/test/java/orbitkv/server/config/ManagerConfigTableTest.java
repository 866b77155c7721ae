package orbitkv.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import orbitkv.testing.TableRows;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Runs config-validation.table: each row's flags are parsed and validated; the exact outcome is checked. */
@Tag("unit")
class ManagerConfigTableTest {
    /**
     * The rows through the one table reader ({@link TableRows}, issue 34 item 6): columns {@code flags | expected},
     * then {@code # RULE-IDs}; each test is named by its rules, file and line, then its flags.
     */
    static Stream<Named<TableRows.Row>> rows() {
        return TableRows.read("config-validation.table",
                        ManagerConfigTableTest.class.getResourceAsStream("config-validation.table"), TableRows.BARS, 2)
                .stream().map(r -> Named.of(r.name() + ": " + r.column(0), r));
    }

    /** Flags as a shell would split them; a FLAG setting takes no value. */
    static RawValues flags(String text) {
        Map<Setting, List<String>> values = new LinkedHashMap<>();
        String[] tokens = text.split("\\s+");
        for (int i = 0; i < tokens.length; i++) {
            Setting s = Setting.byOptionName(tokens[i].substring(2));
            if (s == null) {
                throw new AssertionError("table names an unknown option " + tokens[i]);
            }
            String value = s.kind() == Setting.Kind.FLAG ? "true" : tokens[++i];
            values.computeIfAbsent(s, k -> new ArrayList<>()).add(value);
        }
        RawValues raw = new RawValues();
        values.forEach(raw::put);
        return raw;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    @DisplayName("BND-6 configuration table: unsafe combinations are refused with a message naming the options")
    void row(TableRows.Row row) {
        String flags = row.column(0);
        String expected = row.column(1);
        if (expected.equals("ok")) {
            assertThat(ManagerConfig.from(flags(flags))).isNotNull();
        } else {
            assertThatThrownBy(() -> ManagerConfig.from(flags(flags)))
                    .isInstanceOf(ConfigException.class).hasMessage(expected);
        }
    }
}
