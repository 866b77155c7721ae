package orbitkv.conformance.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.LineMap;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.Tree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.Trees;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * No method of main code is longer than {@value #METHOD_LINES_MAX} lines (issue 34 item 8), and no main source
 * file longer than {@value #FILE_LINES_MAX} (reported, not failed). Methods are found by the JDK's own parser (the
 * javac Tree API, parse only, no attribution), so lambdas, anonymous classes, text blocks and comments never
 * confuse the count. A method's length runs from the line of its first token after its annotations (modifiers,
 * type parameters or return type) to the line of its closing brace; methods of nested, local and anonymous classes
 * are counted on their own and also count inside their enclosing method.
 *
 * <p>{@link #ALLOWED} names the offenders that another open change removes; each entry says which. The lead deletes
 * an entry once that change is merged, and an entry whose method is no longer too long fails this test so the
 * allowlist cannot go stale.
 */
@Tag("unit")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MethodLengthTest {
    static final int METHOD_LINES_MAX = 70;
    static final int FILE_LINES_MAX = 450;
    private static final List<String> MODULES = List.of("orbitkv.testing", "orbitkv.membership", "orbitkv.inventory",
            "orbitkv.index", "orbitkv.transfer", "orbitkv.recovery", "orbitkv.server", "conformance", "dist");

    /**
     * Offenders in code another branch is rewriting now: {@code module/relative/Path.java#method} to the change that
     * removes it. orbitkv.server: issue 34 items 1 and 2 (srv-context, srv-restore restructure it); orbitkv.inventory:
     * the sans-I/O session rewrite (sansio).
     */
    static final Map<String, String> ALLOWED = Map.of();

    private static Map<String, Integer> methods;
    private static Map<String, Integer> files;

    @BeforeAll
    static void parse() throws IOException {
        Path root = Path.of(System.getProperty("orbitkv.root", "..")).toAbsolutePath().normalize();
        methods = new TreeMap<>();
        files = new TreeMap<>();
        for (String module : MODULES) {
            Path main = root.resolve(module).resolve("src/main/java");
            if (Files.isDirectory(main)) {
                measure(root, main);
            }
        }
    }

    @Test
    @DisplayName("no method of main code is longer than 70 lines, except the allowlisted ones another change removes")
    void methodsAreShort() {
        assertThat(methods).as("the parser found the main code's methods").hasSizeGreaterThan(1000);
        List<String> over = new ArrayList<>();
        methods.forEach((m, lines) -> {
            if (lines > METHOD_LINES_MAX && !ALLOWED.containsKey(m)) {
                over.add(m + " " + lines + " lines");
            }
        });
        assertThat(over).as("methods over " + METHOD_LINES_MAX + " lines: cut them into named helpers").isEmpty();
    }

    @Test
    @DisplayName("every allowlisted method still exists and is still too long (the allowlist cannot go stale)")
    void allowlistIsCurrent() {
        List<String> stale = ALLOWED.keySet().stream()
                .filter(m -> methods.getOrDefault(m, 0) <= METHOD_LINES_MAX).sorted().toList();
        assertThat(stale).as("allowlist entries that are gone or now short enough: delete them").isEmpty();
    }

    @Test
    @DisplayName("main source files over 450 lines (reported only)")
    void reportLongFiles() {
        files.forEach((f, lines) -> {
            if (lines > FILE_LINES_MAX) {
                System.out.println("FILE-LENGTH " + f + " " + lines + " lines (> " + FILE_LINES_MAX + ")");
            }
        });
    }

    private static void measure(Path root, Path main) throws IOException {
        List<Path> sources;
        try (Stream<Path> s = Files.walk(main)) {
            sources = s.filter(p -> p.toString().endsWith(".java") && !p.endsWith("module-info.java")).sorted().toList();
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        try (StandardJavaFileManager fm = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            JavacTask task = (JavacTask) javac.getTask(null, fm, null, List.of("-proc:none"), null,
                    fm.getJavaFileObjectsFromPaths(sources));
            SourcePositions positions = Trees.instance(task).getSourcePositions();
            for (CompilationUnitTree unit : task.parse()) {
                String file = root.relativize(Path.of(unit.getSourceFile().toUri())).toString();
                files.put(file, (int) unit.getLineMap().getLineNumber(positions.getEndPosition(unit, unit)));
                new Lengths(unit, positions, file).scan(unit, null);
            }
        }
    }

    /** Records {@code file#Class.method(arity)} to its length in lines. */
    private static final class Lengths extends TreePathScanner<Void, Void> {
        private final CompilationUnitTree unit;
        private final SourcePositions positions;
        private final String file;
        private final LineMap lines;
        private final CharSequence text;

        Lengths(CompilationUnitTree unit, SourcePositions positions, String file) throws IOException {
            this.unit = unit;
            this.positions = positions;
            this.file = file;
            this.lines = unit.getLineMap();
            this.text = unit.getSourceFile().getCharContent(true);
        }

        @Override
        public Void visitMethod(MethodTree m, Void unused) {
            if (m.getBody() != null) {
                long start = firstTokenAfterAnnotations(m);
                long end = positions.getEndPosition(unit, m);
                int length = (int) (lines.getLineNumber(end) - lines.getLineNumber(start) + 1);
                methods.merge(file + "#" + owner() + "." + m.getName() + "(" + m.getParameters().size() + ")", length,
                        Math::max);
            }
            return super.visitMethod(m, unused);
        }

        private long firstTokenAfterAnnotations(MethodTree m) {
            long start = positions.getStartPosition(unit, m);
            if (m.getModifiers().getAnnotations().isEmpty()) {
                return start;
            }
            long pos = positions.getEndPosition(unit, m.getModifiers().getAnnotations().getLast());
            while (pos < text.length() && Character.isWhitespace(text.charAt((int) pos))) {
                pos++;
            }
            return pos;
        }

        /** The enclosing named classes, outermost first ({@code Outer.Inner}); anonymous ones as {@code $}. */
        private String owner() {
            List<String> names = new ArrayList<>();
            for (Tree t : getCurrentPath()) {
                if (t instanceof ClassTree c) {
                    names.addFirst(c.getSimpleName().isEmpty() ? "$" : c.getSimpleName().toString());
                }
            }
            return String.join(".", names);
        }
    }
}
