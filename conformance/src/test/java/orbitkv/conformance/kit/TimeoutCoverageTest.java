package orbitkv.conformance.kit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import orbitkv.conformance.docs.MarkdownTable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every conformance and kit test is bounded in time (issue 26): the module's junit-platform.properties sets a
 * default timeout that JUnit applies to every test, and every qualification class (long by design) carries an
 * explicit {@code @Timeout}. The other modules' tests carry the same default (checked once with a 1 ms default:
 * the module's tests failed with "timed out after 1 millisecond").
 */
@Tag("unit")
class TimeoutCoverageTest {
    private static final Pattern DURATION = Pattern.compile("\\d+\\s*(ns|μs|ms|s|m|h|d)");

    @Test
    @DisplayName("junit-platform.properties sets junit.jupiter.execution.timeout.default (a JUnit duration) for every conformance test")
    void defaultTimeoutIsSet() throws IOException {
        Properties p = new Properties();
        try (InputStream in = TimeoutCoverageTest.class.getResourceAsStream("/junit-platform.properties")) {
            assertThat(in).as("conformance/src/test/resources/junit-platform.properties on the test class path").isNotNull();
            p.load(in);
        }
        String value = p.getProperty("junit.jupiter.execution.timeout.default");
        assertThat(value).as("junit.jupiter.execution.timeout.default").isNotNull();
        assertThat(DURATION.matcher(value.strip()).matches()).as("a JUnit timeout duration, got '%s'", value).isTrue();
    }

    @Test
    @DisplayName("every other module with tests sets the same JUnit default timeout in its test resources")
    void everyModuleSetsADefaultTimeout() throws IOException {
        List<String> missing = new ArrayList<>();
        Path root = MarkdownTable.root();
        try (Stream<Path> modules = Files.list(root)) {
            for (Path m : modules.filter(x -> x.getFileName().toString().startsWith("orbitkv.")
                    && Files.isDirectory(x.resolve("src/test/java"))).sorted().toList()) {
                Path props = m.resolve("src/test/resources/junit-platform.properties");
                Properties p = new Properties();
                if (Files.isRegularFile(props)) {
                    try (InputStream in = Files.newInputStream(props)) {
                        p.load(in);
                    }
                }
                String value = p.getProperty("junit.jupiter.execution.timeout.default");
                if (value == null || !DURATION.matcher(value.strip()).matches()) {
                    missing.add(root.relativize(m) + " (" + value + ")");
                }
            }
        }
        assertThat(missing).as("modules whose tests have no JUnit default timeout").isEmpty();
    }

    @Test
    @DisplayName("every qualification class of the conformance module carries an explicit @Timeout")
    void qualificationClassesHaveTimeouts() throws IOException {
        List<String> missing = new ArrayList<>();
        Path module = MarkdownTable.root().resolve("conformance/src");
        try (Stream<Path> files = Files.walk(module)) {
            for (Path f : files.filter(x -> x.toString().endsWith(".java")).toList()) {
                String text = Files.readString(f, StandardCharsets.UTF_8);
                if (text.contains("@Tag(\"qualification\")") && !text.contains("@Timeout(")) {
                    missing.add(module.relativize(f).toString());
                }
            }
        }
        assertThat(missing).as("qualification classes without @Timeout").isEmpty();
    }
}
