package orbitkv.conformance.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import orbitkv.conformance.docs.MarkdownTable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The specification is self-contained (issue 26 item 6): every section citation in the repository's sources,
 * tables and docs resolves to a numbered section of a document inside the repository, and no Markdown link or
 * path in the docs leaves the repository.
 *
 * <p>Citation forms (docs/design.md, introduction): {@code DESIGN §N} means section N of docs/design.md;
 * {@code X.md §N} (also {@code docs/X.md §N}, {@code [X.md](X.md) §N}) means section N of that page; a chain
 * such as {@code DESIGN §5, §9} or {@code §3–§5} continues the document named first. A bare {@code §N} means
 * the citing page itself in a Markdown file, docs/design.md elsewhere. A numbered section is a Markdown heading
 * {@code ## N. Title} (any level).
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SpecCitationTest {
    /** Text files that may cite sections; everything a reader of the repository reads as source or spec. */
    private static final Set<String> SCANNED_EXTENSIONS = Set.of("java", "md", "proto", "table", "py", "sh", "xml",
            "properties", "txt");
    /** Never scanned: build output, VCS data, hidden directories. */
    private static final Set<String> SKIPPED_DIRECTORIES = Set.of("target", "node_modules", "__pycache__");
    private static final String SEP = "[\\s*/#]*(?:,|;|and|or|–|-|&)[\\s*/#]*";
    /** An optional document token, then §N, then any chained §M. */
    private static final Pattern CITATION = Pattern.compile(
            "(?:(DESIGN(?:\\.md)?|[A-Za-z0-9_./-]*\\.md)[`)\\]]*[\\s*/#]*)?§\\s?(\\d+)((?:" + SEP + "§\\s?\\d+)*)");
    private static final Pattern CHAINED = Pattern.compile("§\\s?(\\d+)");
    private static final Pattern NUMBERED_HEADING = Pattern.compile("^#{1,6}\\s+(\\d+)\\.\\s", Pattern.MULTILINE);
    /** Inline links and images {@code [text](target "title")}. */
    private static final Pattern INLINE_LINK = Pattern.compile("!?\\[[^\\]\\n]*\\]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
    /**
     * Reference definitions {@code [label]: target}; the target must look like a path or URL (contain one of
     * {@code / . # :}), so prose such as "[0.79, 1.92]: does not win" is not taken for one.
     */
    private static final Pattern REFERENCE_LINK =
            Pattern.compile("^[ \\t]{0,3}\\[[^\\]]+\\]:[ \\t]*<?([^\\s>]*[/.#:][^\\s>]*)>?(?:\\s|$)", Pattern.MULTILINE);
    private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");
    /** A path written in prose that climbs out of the checkout, or names the team's shared notes. */
    private static final Pattern OUTSIDE_PATH = Pattern.compile("\\.\\./shared\\b|(?<![\\w.])/work/|\\bshared/(?:DESIGN|RULES|NOTES)\\.md");

    private static Path root;
    private static List<Path> files;
    private static final Map<Path, Set<Integer>> SECTIONS = new HashMap<>();

    @BeforeAll
    static void walk() throws IOException {
        root = MarkdownTable.root();
        try (Stream<Path> s = Files.walk(root)) {
            files = s.filter(Files::isRegularFile)
                    .filter(p -> !skipped(root.relativize(p)))
                    .filter(p -> SCANNED_EXTENSIONS.contains(extension(p)))
                    .sorted()
                    .toList();
        }
    }

    @Test
    @DisplayName("docs/design.md has the numbered sections 1..10 the code cites as DESIGN §N")
    void designIsNumbered() {
        assertThat(sections(root.resolve("docs/design.md"))).containsAll(List.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
    }

    @Test
    @DisplayName("every §N cited in sources, tables and docs resolves to a numbered section inside the repository")
    void everyCitationResolves() {
        List<String> unresolved = new ArrayList<>();
        int citations = 0;
        for (Path file : files) {
            String text = read(file);
            Matcher m = CITATION.matcher(text);
            while (m.find()) {
                Optional<Path> doc = document(file, m.group(1));
                List<Integer> numbers = new ArrayList<>();
                numbers.add(Integer.parseInt(m.group(2)));
                Matcher chained = CHAINED.matcher(m.group(3));
                while (chained.find()) {
                    numbers.add(Integer.parseInt(chained.group(1)));
                }
                for (int n : numbers) {
                    citations++;
                    if (doc.isEmpty() || !sections(doc.get()).contains(n)) {
                        unresolved.add(root.relativize(file) + ":" + line(text, m.start()) + " cites "
                                + (m.group(1) == null ? "" : m.group(1) + " ") + "§" + n + " -> "
                                + doc.map(d -> root.relativize(d) + " has no section " + n).orElse("no such document in the repository"));
                    }
                }
            }
        }
        assertThat(citations).as("citations found (the scan must see the code's DESIGN §N comments)").isGreaterThan(100);
        assertThat(unresolved).isEmpty();
    }

    @Test
    @DisplayName("no Markdown link leaves the repository, and every relative link names an existing file")
    void linksStayInside() {
        List<String> bad = new ArrayList<>();
        for (Path file : files) {
            if (!extension(file).equals("md")) {
                continue;
            }
            String text = read(file);
            for (Pattern p : List.of(INLINE_LINK, REFERENCE_LINK)) {
                Matcher m = p.matcher(text);
                while (m.find()) {
                    String problem = linkProblem(file, m.group(1));
                    if (problem != null) {
                        bad.add(root.relativize(file) + ":" + line(text, m.start()) + " (" + m.group(1) + "): " + problem);
                    }
                }
            }
            Matcher outside = OUTSIDE_PATH.matcher(text);
            while (outside.find()) {
                bad.add(root.relativize(file) + ":" + line(text, outside.start()) + " names a path outside the repository: "
                        + outside.group());
            }
        }
        assertThat(bad).isEmpty();
    }

    @Test
    @DisplayName("the scanner catches what it must: a missing section, an outside document, an outside link")
    void scannerCatchesViolations() {
        Path design = root.resolve("docs/design.md");
        Path java = root.resolve("orbitkv.server/src/main/java/Example.java");
        assertThat(document(java, "DESIGN")).contains(design);
        assertThat(document(java, null)).contains(design);
        assertThat(document(design, null)).contains(design);
        assertThat(document(java, "docs/operations.md")).contains(root.resolve("docs/operations.md"));
        assertThat(document(design, "operations.md")).contains(root.resolve("docs/operations.md"));
        assertThat(document(java, "DESIGN.md")).as("the shared DESIGN.md is not in the repository").isEmpty();
        assertThat(document(java, "../shared/DESIGN.md")).isEmpty();

        Matcher m = CITATION.matcher("(DESIGN §5, §9; INV-9) and\n * DESIGN §4,\n * §7; [operations.md](operations.md) §3–§5");
        List<String> found = new ArrayList<>();
        while (m.find()) {
            found.add(m.group(1) + " " + m.group(2) + m.group(3).replaceAll("[^0-9§]", ""));
        }
        assertThat(found).containsExactly("DESIGN 5§9", "DESIGN 4§7", "operations.md 3§5");

        assertThat(linkProblem(design, "../../shared/DESIGN.md")).contains("outside");
        assertThat(linkProblem(design, "https://example.org/x")).contains("outside");
        assertThat(linkProblem(design, "no-such-page.md")).contains("no such file");
        assertThat(linkProblem(design, "operations.md#2-key-layout")).isNull();
        assertThat(linkProblem(design, "#rules")).isNull();
        assertThat(OUTSIDE_PATH.matcher("the map in `../shared/` says").find()).isTrue();
        assertThat(REFERENCE_LINK.matcher("[0.793, 1.920]: does not win").find()).isFalse();
        Matcher ref = REFERENCE_LINK.matcher("text\n[design]: ../../shared/DESIGN.md\n");
        assertThat(ref.find()).isTrue();
        assertThat(linkProblem(design, ref.group(1))).contains("outside");
    }

    // ------------------------------------------------------------------ resolution

    /** The document a citation names: DESIGN (or nothing outside Markdown) is docs/design.md; X.md is looked up. */
    private static Optional<Path> document(Path citing, String token) {
        if (token == null) {
            return Optional.of(extension(citing).equals("md") ? citing : root.resolve("docs/design.md"));
        }
        if (token.equals("DESIGN")) {
            return Optional.of(root.resolve("docs/design.md"));
        }
        List<Path> candidates = token.contains("/")
                ? List.of(root.resolve(token), citing.getParent().resolve(token))
                : List.of(root.resolve("docs").resolve(token), citing.getParent().resolve(token));
        return candidates.stream().map(Path::normalize)
                .filter(p -> p.startsWith(root) && Files.isRegularFile(p))
                .findFirst();
    }

    private static String linkProblem(Path file, String target) {
        if (SCHEME.matcher(target).find()) {
            return "a link outside the repository (the docs must be readable from the checkout alone)";
        }
        String path = target.replaceFirst("[#?].*$", "");
        if (path.isEmpty()) {
            return null; // an anchor in the same page
        }
        Path resolved = (path.startsWith("/") ? root.resolve(path.substring(1)) : file.getParent().resolve(path)).normalize();
        if (!resolved.startsWith(root)) {
            return "a link outside the repository";
        }
        return Files.exists(resolved) ? null : "no such file in the repository";
    }

    private static Set<Integer> sections(Path doc) {
        return SECTIONS.computeIfAbsent(doc, d -> {
            Set<Integer> numbers = new TreeSet<>();
            if (Files.isRegularFile(d)) {
                Matcher m = NUMBERED_HEADING.matcher(stripFences(read(d)));
                while (m.find()) {
                    numbers.add(Integer.parseInt(m.group(1)));
                }
            }
            return numbers;
        });
    }

    /** Headings inside fenced code blocks are not headings. */
    private static String stripFences(String markdown) {
        return markdown.replaceAll("(?ms)^```.*?^```", "");
    }

    private static boolean skipped(Path relative) {
        for (Path part : relative) {
            String name = part.toString();
            if (name.startsWith(".") || SKIPPED_DIRECTORIES.contains(name)) {
                return true;
            }
        }
        return false;
    }

    private static String extension(Path p) {
        String name = p.getFileName().toString();
        int dot = name.lastIndexOf('.');
        return dot < 0 ? "" : name.substring(dot + 1);
    }

    private static int line(String text, int offset) {
        int n = 1;
        for (int i = 0; i < offset; i++) {
            if (text.charAt(i) == '\n') {
                n++;
            }
        }
        return n;
    }

    private static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(p.toString(), e);
        }
    }
}
