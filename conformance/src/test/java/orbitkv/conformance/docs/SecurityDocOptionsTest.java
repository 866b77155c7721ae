package orbitkv.conformance.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 33 Deliver 6: every option docs/security.md names exists. Each {@code --option-name} inside a backtick
 * code span (inline or fenced) must be a Manager setting (an entry of the {@code Setting} enum in
 * orbitkv.server/src/main/java/orbitkv/server/config/Setting.java, read as source because {@code orbitkv.server}
 * exports nothing), a picocli option of another command of this repository ({@code @Option(names = ...)} in any
 * {@code src/main/java}: {@code orbitkv admin}, {@code orbitkv demo}, {@code orbitkv selftest}, the conformance
 * kit), a picocli standard option, or a flag of another program listed in {@link #EXTERNAL} with the program
 * that owns it. A made-up or renamed option fails the test by name.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SecurityDocOptionsTest {
    static final String PAGE = "docs/security.md";
    static final String SETTING_SOURCE = "orbitkv.server/src/main/java/orbitkv/server/config/Setting.java";
    /** {@code NAME("option-name", Kind.X, ...)}: one Setting entry. */
    private static final Pattern SETTING = Pattern.compile("^\\s+[A-Z][A-Z0-9_]*\\(\"([a-z0-9-]+)\",\\s*Kind\\.", Pattern.MULTILINE);
    /** {@code @Option(names = "--x"} or {@code @Option(names = {"--x", "-y"}}. */
    private static final Pattern QUOTED_FLAG = Pattern.compile("\"(--[a-z0-9][a-z0-9-]*)\"");
    /** Inline code spans and fenced blocks. */
    private static final Pattern CODE = Pattern.compile("```[^\\n]*\\n(.*?)```|`([^`\\n]+)`", Pattern.DOTALL);
    private static final Pattern FLAG = Pattern.compile("(?<![\\w-])--[a-z0-9][a-z0-9-]*");
    /** picocli's mixinStandardHelpOptions. */
    private static final Set<String> STANDARD = Set.of("--help", "--version");
    /** Flags of other programs a deployment page may name, each with its program. Extend with care. */
    static final Map<String, String> EXTERNAL = Map.ofEntries(
            Map.entry("--client-cert-auth", "etcd"),
            Map.entry("--trusted-ca-file", "etcd"),
            Map.entry("--cert-file", "etcd"),
            Map.entry("--key-file", "etcd"),
            Map.entry("--peer-client-cert-auth", "etcd"),
            Map.entry("--peer-trusted-ca-file", "etcd"),
            Map.entry("--peer-cert-file", "etcd"),
            Map.entry("--peer-key-file", "etcd"),
            Map.entry("--listen-client-urls", "etcd"),
            Map.entry("--advertise-client-urls", "etcd"),
            Map.entry("--cacert", "etcdctl"),
            Map.entry("--cert", "etcdctl"),
            Map.entry("--key", "etcdctl"),
            Map.entry("--endpoints", "etcdctl"));

    @Test
    @DisplayName("issue 33 every --option named in docs/security.md is a Manager setting or a flag of another documented command")
    void everyOptionInTheSecurityPageExists() {
        Path root = MarkdownTable.root();
        Set<String> unknown = unknownOptions(read(root.resolve(PAGE)), knownOptions(root));
        assertThat(unknown).as("options named in %s that are no Setting (%s), no picocli option of another command "
                + "and no listed flag of another program", PAGE, SETTING_SOURCE).isEmpty();
    }

    @Test
    @DisplayName("the check reads code spans and fenced blocks and refuses a made-up option by name")
    void aMadeUpOptionIsNamed() {
        Set<String> known = knownOptions(MarkdownTable.root());
        assertThat(known).contains("--http-token-file", "--peer-tls-ca-file", "--etcd-ca-file", "--etcd-timeout-ms",
                "--target-peer", "--no-skip-policy", "--help");
        String page = "Use `orbitkv manager --http-token-file F --made-up-option 3` and\n```\norbitkv admin --etcd-no-such x\n```\n"
                + "Prose --not-in-code is not read; `--client-cert-auth` belongs to etcd.";
        assertThat(unknownOptions(page, known)).containsExactly("--etcd-no-such", "--made-up-option");
    }

    /** Options in code spans of {@code page} that are not in {@code known}, sorted. */
    static Set<String> unknownOptions(String page, Set<String> known) {
        Set<String> unknown = new TreeSet<>();
        Matcher code = CODE.matcher(page);
        while (code.find()) {
            String span = code.group(1) != null ? code.group(1) : code.group(2);
            Matcher flag = FLAG.matcher(span);
            while (flag.find()) {
                if (!known.contains(flag.group())) {
                    unknown.add(flag.group());
                }
            }
        }
        return unknown;
    }

    /** Setting flags, every picocli option of this repository's commands (a negatable one also as --no-), standard and external flags. */
    static Set<String> knownOptions(Path root) {
        Set<String> known = new TreeSet<>(STANDARD);
        known.addAll(EXTERNAL.keySet());
        Matcher s = SETTING.matcher(read(root.resolve(SETTING_SOURCE)));
        int settings = 0;
        while (s.find()) {
            known.add("--" + s.group(1));
            settings++;
        }
        if (settings < 50) {
            throw new IllegalStateException("read only " + settings + " Setting entries from " + SETTING_SOURCE
                    + ": has its entry format changed?");
        }
        try (Stream<Path> files = Files.walk(root)) {
            files.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/main/java/"))
                    .filter(p -> !p.toString().contains("/target/"))
                    .forEach(p -> {
                        String text = read(p);
                        if (!text.contains("@Option")) {
                            return;
                        }
                        Matcher o = Pattern.compile("@Option\\(\\s*names\\s*=\\s*(\\{[^}]*\\}|\"[^\"]*\")").matcher(text);
                        while (o.find()) {
                            int end = text.indexOf(")\n", o.start());
                            boolean negatable = text.substring(o.start(), end < 0 ? text.length() : end)
                                    .contains("negatable = true");
                            Matcher f = QUOTED_FLAG.matcher(o.group(1));
                            while (f.find()) {
                                known.add(f.group(1));
                                if (negatable) {
                                    known.add("--no-" + f.group(1).substring(2)); // picocli's negated form
                                }
                            }
                        }
                    });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return known;
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
