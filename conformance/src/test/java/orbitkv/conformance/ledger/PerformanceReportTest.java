package orbitkv.conformance.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import orbitkv.conformance.docs.MarkdownTable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 34 item 5: docs/performance.md is a current report, not a run log. It stays at most {@link #LINES_MAX}
 * lines; every contract row (a table row of a numbered section) names a verdict and links the record of its run;
 * every link on the page resolves, a {@code #anchor} included (to a heading of the target, GitHub's slug); every
 * record under docs/results/ is reachable from the page; and every {@code performance.md#anchor} link elsewhere in
 * docs/ still resolves.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PerformanceReportTest {
    static final String PAGE = "docs/performance.md";
    static final int LINES_MAX = 300;
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern NUMBERED_SECTION = Pattern.compile("^## \\d+\\. ");
    private static final Pattern VERDICT = Pattern.compile("\\*\\*(PASS|FAIL|NOT RUN)\\*\\*|\\breported\\b");
    private static final Pattern RECORD = Pattern.compile("\\]\\((?:results/[0-9]{4}-[0-9]{2}-[0-9]{2}-[a-z0-9-]+\\.md|results/)(?:#[^)]*)?\\)");

    private final Path root = MarkdownTable.root();

    @Test
    @DisplayName("issue 34 docs/performance.md stays a report: at most 300 lines")
    void isShort() throws IOException {
        assertThat(Files.readAllLines(root.resolve(PAGE))).as(PAGE + ": move run details into docs/results/").hasSizeLessThanOrEqualTo(LINES_MAX);
    }

    @Test
    @DisplayName("issue 34 every contract row of docs/performance.md names a verdict and links the record of its run")
    void everyContractRowHasAVerdictAndARecord() throws IOException {
        assertThat(rowProblems(Files.readAllLines(root.resolve(PAGE)))).isEmpty();
    }

    @Test
    @DisplayName("issue 34 every link of docs/performance.md resolves (anchors included) and every record in docs/results/ is linked")
    void linksResolveAndRecordsAreReachable() throws IOException {
        Path page = root.resolve(PAGE);
        List<String> bad = linkProblems(page, Files.readString(page));
        Set<String> linked = new TreeSet<>();
        Matcher m = LINK.matcher(Files.readString(page));
        while (m.find()) {
            linked.add(page.getParent().resolve(m.group(1).replaceFirst("#.*", "")).normalize().toString());
        }
        try (Stream<Path> s = Files.list(root.resolve("docs/results"))) {
            s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(p -> {
                if (!linked.contains(p.normalize().toString())) {
                    bad.add(root.relativize(p) + " is linked from no row of " + PAGE + " (add it to its Records table)");
                }
            });
        }
        assertThat(bad).isEmpty();
    }

    @Test
    @DisplayName("issue 34 every performance.md#anchor link in docs/ still resolves")
    void anchorsIntoTheReportResolve() throws IOException {
        List<String> bad = new ArrayList<>();
        try (Stream<Path> s = Files.walk(root.resolve("docs"))) {
            for (Path p : s.filter(f -> f.toString().endsWith(".md")).sorted().toList()) {
                String text = Files.readString(p);
                if (text.contains("performance.md#")) {
                    bad.addAll(linkProblems(p, text).stream().filter(b -> b.contains("performance.md#")).toList());
                }
            }
        }
        assertThat(bad).isEmpty();
    }

    @Test
    @DisplayName("the row check names a row without a verdict or a record, and the link check a missing file and anchor")
    void problemsAreNamed() throws IOException {
        List<String> page = List.of("# R", "## 1. Area", "| contract | threshold | figure | verdict | floor | record |",
                "|---|---|---|---|---|---|", "| A | 1 | 2 | **PASS** | — | [r](results/2026-01-01-a.md) |",
                "| B | 1 | 2 | good | — | [r](results/2026-01-01-b.md) |", "| C | 1 | 2 | **FAIL** | — | none |");
        assertThat(rowProblems(page)).containsExactly(PAGE + ":6: a contract row without a verdict (PASS, FAIL, NOT RUN or reported)",
                PAGE + ":7: a contract row without a link to its record in results/");
        Path page2 = root.resolve(PAGE);
        assertThat(linkProblems(page2, "[a](results/1999-01-01-none.md) [b](testing.md#no-such-heading) [c](testing.md)"))
                .containsExactly(PAGE + ":1: results/1999-01-01-none.md -> no such file",
                        PAGE + ":1: testing.md#no-such-heading -> no heading with that anchor in docs/testing.md");
    }

    static List<String> rowProblems(List<String> lines) {
        List<String> out = new ArrayList<>();
        boolean inContracts = false;
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i);
            if (l.startsWith("## ")) {
                inContracts = NUMBERED_SECTION.matcher(l).find();
                continue;
            }
            if (!inContracts || !l.startsWith("| ") || l.startsWith("| contract |") || l.startsWith("|---")) {
                continue;
            }
            if (!VERDICT.matcher(l).find()) {
                out.add(PAGE + ":" + (i + 1) + ": a contract row without a verdict (PASS, FAIL, NOT RUN or reported)");
            } else if (!RECORD.matcher(l).find()) {
                out.add(PAGE + ":" + (i + 1) + ": a contract row without a link to its record in results/");
            }
        }
        return out;
    }

    /** Relative links of {@code file} whose target file or heading anchor does not exist. */
    List<String> linkProblems(Path file, String text) {
        List<String> out = new ArrayList<>();
        Matcher m = LINK.matcher(text);
        while (m.find()) {
            String target = m.group(1);
            if (target.matches("^[A-Za-z][A-Za-z0-9+.-]*:.*")) {
                continue; // not a repository link; SpecCitationTest refuses those in docs
            }
            int hash = target.indexOf('#');
            String path = hash < 0 ? target : target.substring(0, hash);
            Path resolved = path.isEmpty() ? file : file.getParent().resolve(path).normalize();
            String at = root.relativize(file) + ":" + CodeIndex.lineOf(text, m.start()) + ": " + target;
            if (!Files.exists(resolved)) {
                out.add(at + " -> no such file");
            } else if (hash >= 0 && Files.isRegularFile(resolved) && !anchors(resolved).contains(target.substring(hash + 1))) {
                out.add(at + " -> no heading with that anchor in " + root.relativize(resolved));
            }
        }
        return out;
    }

    /** GitHub's heading anchors: lower case, punctuation but '-' and '_' dropped, spaces to '-'. */
    static Set<String> anchors(Path markdown) {
        Set<String> out = new TreeSet<>();
        for (String line : CodeIndex.read(markdown).split("\n")) {
            if (line.matches("^#{1,6} .*")) {
                String h = line.replaceFirst("^#+ ", "").strip().toLowerCase(Locale.ROOT);
                out.add(h.replaceAll("[^\\p{L}\\p{N}\\- _]", "").replace(' ', '-'));
            }
        }
        return out;
    }
}
