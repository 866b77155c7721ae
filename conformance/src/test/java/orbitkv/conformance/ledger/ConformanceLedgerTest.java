package orbitkv.conformance.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import orbitkv.conformance.docs.MarkdownTable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * docs/conformance.md is the ledger of rule IDs (RULES.md) and the tests that check them. This test keeps
 * the ledger honest: every test it names exists, every rule a test cites is marked as tested, and (where
 * the shared RULES.md is present beside the checkout, as in CI) the ledger lists exactly its IDs.
 */
class ConformanceLedgerTest {
    private static final Pattern RULE_ID =
            Pattern.compile("\\b(INV|MEM|PUB|SES|DELTA|SNAP|IDX|API|BND|ROUTE|DIAG|OPS|PERF)-\\d+\\b");
    private static final Pattern TEST_REF = Pattern.compile("`([A-Za-z0-9_./#-]+)`");
    private static Map<String, List<String>> ledger; // id -> [status, tests]
    private static Path root;

    @BeforeAll
    static void read() {
        root = MarkdownTable.root();
        ledger = new TreeMap<>();
        for (List<String> row : MarkdownTable.rows(root.resolve("docs/conformance.md"), "conformance-ledger")) {
            assertThat(ledger.put(row.get(0), row)).as("rule %s listed twice", row.get(0)).isNull();
        }
    }

    @Test
    @DisplayName("every ledger row is a rule ID with status 'tested' (naming tests) or 'not yet' (with a reason)")
    void rowsAreWellFormed() {
        for (List<String> row : ledger.values()) {
            assertThat(row.get(0)).matches(RULE_ID);
            assertThat(row.get(1)).as("status of %s", row.get(0)).isIn("tested", "partly", "not yet");
            if (row.get(1).equals("not yet")) {
                assertThat(row.get(2)).as("reason for %s", row.get(0)).isNotBlank();
            } else {
                assertThat(TEST_REF.matcher(row.get(2)).find()).as("tests named for %s", row.get(0)).isTrue();
            }
        }
    }

    @Test
    @DisplayName("every test or table the ledger names exists in the repository")
    void namedTestsExist() throws IOException {
        Set<String> sources = testSourceNames();
        List<String> missing = new ArrayList<>();
        for (List<String> row : ledger.values()) {
            Matcher m = TEST_REF.matcher(row.get(2));
            while (m.find()) {
                String ref = m.group(1);
                if (ref.startsWith(".") || ref.startsWith("#")) {
                    continue; // ".method" continues the class named just before it in the same cell
                }
                boolean found = ref.contains("/") ? Files.exists(root.resolve(ref)) : sources.contains(ref)
                        || sources.contains(ref.split("[#.]", 2)[0]);
                if (!found) {
                    missing.add(row.get(0) + " -> " + ref);
                }
            }
        }
        assertThat(missing).isEmpty();
    }

    @Test
    @DisplayName("a rule cited by any test or table is not marked 'not yet'")
    void citedRulesAreMarkedTested() throws IOException {
        Set<String> cited = new TreeSet<>();
        try (Stream<Path> files = testFiles()) {
            for (Path f : files.toList()) {
                Matcher m = RULE_ID.matcher(Files.readString(f));
                while (m.find()) {
                    cited.add(m.group());
                }
            }
        }
        List<String> wrong = cited.stream()
                .filter(id -> ledger.containsKey(id) && ledger.get(id).get(1).equals("not yet"))
                .toList();
        assertThat(cited).as("rule IDs cited in tests").isNotEmpty();
        assertThat(ledger.keySet()).as("cited IDs missing from the ledger").containsAll(cited);
        assertThat(wrong).as("cited by tests but marked 'not yet'").isEmpty();
    }

    @Test
    @DisplayName("the ledger lists exactly the rule IDs of RULES.md (when shared/RULES.md is beside the checkout)")
    void ledgerCoversRules() throws IOException {
        Path rules = root.resolve("../shared/RULES.md").normalize();
        Set<String> ids = new TreeSet<>();
        if (Files.exists(rules)) {
            for (String line : Files.readAllLines(rules)) {
                Matcher m = Pattern.compile("^- (" + RULE_ID.pattern() + ") ").matcher(line);
                if (m.find()) {
                    ids.add(m.group(1));
                }
            }
            assertThat(ids).as("IDs parsed from " + rules).hasSizeGreaterThan(100);
            assertThat(ledger.keySet()).isEqualTo(ids);
        } else {
            assertThat(ledger).as("without RULES.md the ledger must still be the full list").hasSizeGreaterThan(100);
        }
    }

    private static Set<String> testSourceNames() throws IOException {
        Set<String> names = new TreeSet<>();
        try (Stream<Path> files = testFiles()) {
            files.forEach(p -> {
                String n = p.getFileName().toString();
                names.add(n.endsWith(".java") ? n.substring(0, n.length() - 5) : n);
            });
        }
        return names;
    }

    private static Stream<Path> testFiles() throws IOException {
        try {
            return Files.walk(root)
                    .filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/.git/"))
                    .filter(p -> p.toString().contains("/src/test/") || p.toString().contains("/src/jmh/"))
                    .filter(Files::isRegularFile);
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}
