package orbitkv.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Runs config-validation.table: each row's flags are parsed and validated; the exact outcome is checked. */
@Tag("unit")
class ManagerConfigTableTest {
    record Row(int line, String flags, String expected, String rules) {
        @Override
        public String toString() {
            return rules + " line " + line + ": " + flags;
        }
    }

    static Stream<Row> rows() throws IOException {
        List<Row> rows = new ArrayList<>();
        try (InputStream in = ManagerConfigTableTest.class.getResourceAsStream("config-validation.table")) {
            String[] lines = new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n");
            for (int i = 0; i < lines.length; i++) {
                String line = lines[i];
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                int bar = line.indexOf('|');
                int hash = line.lastIndexOf("  # ");
                rows.add(new Row(i + 1, line.substring(0, bar).strip(), line.substring(bar + 1, hash).strip(),
                        line.substring(hash + 4).strip()));
            }
        }
        return rows.stream();
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
    void row(Row row) {
        if (row.expected().equals("ok")) {
            assertThat(ManagerConfig.from(flags(row.flags()))).isNotNull();
        } else {
            assertThatThrownBy(() -> ManagerConfig.from(flags(row.flags())))
                    .isInstanceOf(ConfigException.class).hasMessage(row.expected());
        }
    }
}
