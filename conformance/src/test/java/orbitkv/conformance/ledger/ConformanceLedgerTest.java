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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * docs/conformance.md is the ledger of rule IDs (stated in docs/design.md) and the tests that check them. This
 * test keeps the ledger honest: every test it names exists, every rule a test cites is marked as tested, the
 * ledger lists exactly the IDs docs/design.md states, and (where the shared RULES.md is present beside the
 * checkout) docs/design.md states exactly RULES.md's IDs, apart from its clearly marked subsection of rules added by
 * this repository ({@link #ADDED_RULES}), which the ledger lists like any other.
 */
@Tag("unit")
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
    @DisplayName("every cited Class#method, Class.method or .method continuation names a test method that exists")
    void citedMethodsExist() throws IOException {
        Map<String, List<Path>> sources = testSources();
        List<String> missing = new ArrayList<>();
        for (List<String> row : ledger.values()) {
            missing.addAll(missingMethods(row.get(0), row.get(2), sources));
        }
        assertThat(missing).as("cited test methods that do not exist (or carry no test annotation)").isEmpty();
    }

    @Test
    @DisplayName("the method check fails on a method that does not exist, and accepts one that does")
    void methodCheckCanFail() throws IOException {
        Map<String, List<Path>> sources = testSources();
        assertThat(missingMethods("X-1", "`ConformanceLedgerTest.noSuchMethodAnywhere`; .citedMethodsExist", sources))
                .containsExactly("X-1 -> ConformanceLedgerTest.noSuchMethodAnywhere");
        assertThat(missingMethods("X-1", "`ConformanceLedgerTest#citedMethodsExist`, .methodCheckCanFail", sources)).isEmpty();
        assertThat(missingMethods("X-1", "`ConformanceLedgerTest` (whole class), .notATest", sources))
                .containsExactly("X-1 -> ConformanceLedgerTest.notATest");
    }

    @Test
    @DisplayName("a row marked 'tested' carries no 'not yet' clause (partial coverage is marked 'partly')")
    void testedRowsHaveNoNotYet() {
        List<String> wrong = ledger.values().stream()
                .filter(row -> row.get(1).equals("tested") && row.get(2).toLowerCase(java.util.Locale.ROOT).contains("not yet"))
                .map(row -> row.get(0)).toList();
        assertThat(wrong).as("rows marked tested that say 'not yet'").isEmpty();
    }

    /** A reference to one method: backquoted {@code Class#m} / {@code Class.m}, or {@code .m} after a named class. */
    private static final Pattern METHOD_REF = Pattern.compile("`([A-Z][A-Za-z0-9_]*)[#.]([a-z][A-Za-z0-9_]*)`|(?<![A-Za-z0-9_`])\\.([a-z][A-Za-z0-9_]*)\\b");
    private static final Pattern CLASS_REF = Pattern.compile("`([A-Z][A-Za-z0-9_]*)(?:[#.][a-z][A-Za-z0-9_]*)?`");
    private static final Pattern TEST_ANNOTATION = Pattern.compile(
            "@(?:org\\.junit\\.jupiter\\.(?:api|params)\\.)?(Test|TestFactory|ParameterizedTest|RepeatedTest)\\b");

    /** The unresolved method references of one ledger cell, as {@code RULE -> Class.method}. */
    static List<String> missingMethods(String rule, String cell, Map<String, List<Path>> sources) throws IOException {
        List<String> missing = new ArrayList<>();
        String lastClass = null;
        int pos = 0;
        Matcher m = METHOD_REF.matcher(cell);
        while (m.find()) {
            Matcher c = CLASS_REF.matcher(cell.substring(pos, m.start()));
            while (c.find()) {
                lastClass = c.group(1);
            }
            pos = m.end();
            String cls = m.group(1) != null ? m.group(1) : lastClass;
            String method = m.group(1) != null ? m.group(2) : m.group(3);
            if (m.group(1) != null) {
                lastClass = m.group(1);
            }
            if (cls == null || !sources.containsKey(cls)) {
                continue; // a continuation with no class before it, or a non-Java name: namedTestsExist covers classes
            }
            if (!declaresTest(sources.get(cls), method)) {
                missing.add(rule + " -> " + cls + "." + method);
            }
        }
        return missing;
    }

    /** True iff one of the files declares {@code method(...)} carrying a JUnit test annotation. */
    private static boolean declaresTest(List<Path> files, String method) throws IOException {
        Pattern decl = Pattern.compile("(?m)^\\s*(?:(?:public|protected|private|static|final)\\s+)*[A-Za-z0-9_<>\\[\\], ?]+\\s+"
                + Pattern.quote(method) + "\\s*\\(");
        for (Path f : files) {
            String text = Files.readString(f);
            Matcher d = decl.matcher(text);
            while (d.find()) {
                int memberStart = Math.max(text.lastIndexOf("}\n", d.start()), text.lastIndexOf(";\n", d.start()));
                if (TEST_ANNOTATION.matcher(text.substring(Math.max(0, memberStart), d.start())).find()) {
                    return true;
                }
            }
        }
        return false;
    }

    private static Map<String, List<Path>> testSources() throws IOException {
        Map<String, List<Path>> out = new TreeMap<>();
        try (Stream<Path> files = testFiles()) {
            files.filter(p -> p.toString().endsWith(".java")).forEach(p -> {
                String n = p.getFileName().toString();
                out.computeIfAbsent(n.substring(0, n.length() - 5), k -> new ArrayList<>()).add(p);
            });
        }
        return out;
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
    @DisplayName("the ledger lists exactly the rule IDs stated in docs/design.md (and RULES.md when it is beside the checkout)")
    void ledgerCoversRules() throws IOException {
        Set<String> stated = ruleIds(root.resolve("docs/design.md"), "^- \\*\\*(" + RULE_ID.pattern() + ")\\*\\* ");
        assertThat(stated).as("rule IDs stated in docs/design.md").hasSizeGreaterThan(100);
        assertThat(ledger.keySet()).as("ledger rows vs docs/design.md").isEqualTo(stated);
        Set<String> added = ruleIds(root.resolve("docs/design.md"), "^- \\*\\*(" + RULE_ID.pattern() + ")\\*\\* ", true);
        assertThat(added).as("rules added by this repository (docs/design.md, '" + ADDED_RULES + "')").contains("MEM-11");
        Set<String> shared = new TreeSet<>(stated);
        shared.removeAll(added);
        Path rules = root.resolve("../shared/RULES.md").normalize();
        if (Files.exists(rules)) {
            Set<String> sharedIds = ruleIds(rules, "^- (" + RULE_ID.pattern() + ") ");
            assertThat(shared).as("docs/design.md (without its added rules) vs " + rules).isEqualTo(sharedIds);
            assertThat(added).as("added rules must not be in " + rules).doesNotContainAnyElementsOf(sharedIds);
        }
    }

    @Test
    @DisplayName("the added-rules subsection is found by its heading and ends at the next heading")
    void addedRulesSubsectionIsDelimited() throws IOException {
        Path f = Files.createTempFile("design", ".md");
        try {
            Files.writeString(f, "### Invariants\n- **INV-1** a\n### " + ADDED_RULES + "\n- **MEM-11** b\n"
                    + "### Later\n- **OPS-1** c\n");
            String p = "^- \\*\\*(" + RULE_ID.pattern() + ")\\*\\* ";
            assertThat(ruleIds(f, p, true)).containsExactly("MEM-11");
            assertThat(ruleIds(f, p, false)).containsExactly("INV-1", "MEM-11", "OPS-1");
        } finally {
            Files.delete(f);
        }
    }

    /** The heading of docs/design.md's subsection of rules that the shared RULES.md does not have. */
    static final String ADDED_RULES = "Rules added by this repository (not in the shared RULES.md)";

    private static Set<String> ruleIds(Path file, String linePattern) throws IOException {
        return ruleIds(file, linePattern, false);
    }

    /** Rule IDs on matching lines; with {@code addedOnly}, only those inside the {@link #ADDED_RULES} subsection. */
    private static Set<String> ruleIds(Path file, String linePattern, boolean addedOnly) throws IOException {
        Pattern p = Pattern.compile(linePattern);
        Set<String> ids = new TreeSet<>();
        boolean inAdded = false;
        for (String line : Files.readAllLines(file)) {
            if (line.startsWith("#")) {
                inAdded = line.replaceFirst("^#+\\s*", "").equals(ADDED_RULES);
            }
            Matcher m = p.matcher(line);
            if (m.find() && (!addedOnly || inAdded)) {
                ids.add(m.group(1));
            }
        }
        return ids;
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
