package orbitkv.server.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The server's packages form layers (issue 34 item 2 and its acceptance: "no import runs back up; no new circle";
 * docs/architecture.md lists them): a package names only packages on a lower floor, never one on its own floor or
 * above, so no import circle between packages can form. {@code http} is the HTTP adapter: only the launcher
 * ({@code cli}) builds it, and it reaches the Manager core through the {@link ApiListener} port that {@code runtime}
 * defines. The scan reads the main sources' text: import lines and fully qualified names in code (comments are
 * stripped), so a reference that skips the import is counted too.
 */
@Tag("unit")
class ServerLayersTest {
    private static final Path SERVER = Path.of("src/main/java/orbitkv/server");
    /** Package to floor; higher floors may name lower ones. A package missing here fails {@link #everyPackageHasAFloor}. */
    static final Map<String, Integer> FLOORS = Map.ofEntries(
            Map.entry("cli", 10), Map.entry("demo", 9), Map.entry("http", 8), Map.entry("runtime", 7),
            Map.entry("metrics", 6), Map.entry("api", 6), Map.entry("restore", 5), Map.entry("incarnation", 5),
            Map.entry("transfer", 4), Map.entry("net", 3), Map.entry("tier", 2), Map.entry("admission", 1),
            Map.entry("config", 0));
    private static final Pattern NAMED = Pattern.compile("\\borbitkv\\.server\\.([a-z]+)\\.[A-Za-z*]");

    record Reference(String from, String file, String to) {
        @Override
        public String toString() {
            return from + "/" + file + " -> " + to;
        }
    }

    @Test
    @DisplayName("issue 34: every package of the server has a floor (a new package is placed on purpose)")
    void everyPackageHasAFloor() throws IOException {
        try (Stream<Path> dirs = Files.list(SERVER)) {
            List<String> packages = dirs.filter(Files::isDirectory).map(p -> p.getFileName().toString()).toList();
            assertThat(FLOORS.keySet()).as("packages of orbitkv.server without a floor in FLOORS")
                    .containsAll(packages);
        }
    }

    @Test
    @DisplayName("issue 34: no package below http imports orbitkv.server.http; only the launcher (cli) builds the adapter")
    void nothingBelowTheAdapterImportsHttp() {
        List<Reference> intoHttp = references().stream()
                .filter(r -> r.to().equals("http") && !r.from().equals("cli")).toList();
        assertThat(intoHttp).as("packages that import the HTTP adapter").isEmpty();
    }

    @Test
    @DisplayName("issue 34: no import runs back up or sideways between the server's packages (no circle can form)")
    void importsRunDownOnly() {
        List<Reference> upward = references().stream()
                .filter(r -> FLOORS.containsKey(r.to()) && FLOORS.get(r.to()) >= FLOORS.getOrDefault(r.from(), 0))
                .toList();
        assertThat(upward).as("references to a package on the same or a higher floor").isEmpty();
    }

    @Test
    @DisplayName("issue 34: the scan sees imports and fully qualified names (a planted upward reference is found)")
    void theScanSeesBothForms() {
        String code = "package orbitkv.server.tier;\nimport orbitkv.server.http.HttpApiServer;\n"
                + "/* orbitkv.server.cli.Foo in a comment */ class X { orbitkv.server.runtime.ManagerCore c;\n"
                + "String m = \"orbitkv.server/orbitkv.server.demo.Main\"; // orbitkv.server.cli.Bar\n}";
        assertThat(namedPackages(code)).containsExactly("http", "runtime");
    }

    /** Every reference from one server package to another in main code. */
    static List<Reference> references() {
        List<Reference> out = new ArrayList<>();
        try (Stream<Path> files = Files.walk(SERVER)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String from = SERVER.relativize(f).getName(0).toString();
                for (String to : namedPackages(Files.readString(f))) {
                    if (!to.equals(from)) {
                        out.add(new Reference(from, f.getFileName().toString(), to));
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        assertThat(out).as("the scan found the server's cross-package references").isNotEmpty();
        return out;
    }

    /**
     * The server packages a source text names in code: string literals (a child process's main class name), comments
     * and the package line are not references.
     */
    static TreeSet<String> namedPackages(String java) {
        String code = java.replaceAll("\"(?:\\\\.|[^\"\\\\\\n])*\"", "\"\"").replaceAll("(?s)/\\*.*?\\*/", "")
                .replaceAll("//[^\\n]*", "").replaceFirst("(?m)^package [^;]+;", "");
        TreeSet<String> named = new TreeSet<>();
        Matcher m = NAMED.matcher(code);
        while (m.find()) {
            named.add(m.group(1));
        }
        return named;
    }
}
