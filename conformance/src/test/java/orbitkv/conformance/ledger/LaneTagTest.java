package orbitkv.conformance.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every test class belongs to exactly one lane (docs/testing.md): {@code unit} (one JVM, no external process, no
 * multi-node world; {@code scripts/test --fast}), {@code gate} (real etcd, Manager or other child processes,
 * multi-node session worlds over real gRPC), {@code qualification} (performance harnesses and long campaigns that
 * CI never runs). The lane is a class-level {@code @Tag} that Surefire's {@code groups} expression selects on.
 *
 * <p>Why a source scan: the default build selects {@code !qualification}, so a class without a lane tag still runs
 * in CI, but {@code scripts/test --fast} selects {@code unit} and would silently drop it. This test names such a
 * class instead. It reads every module's {@code src/test/java} and {@code src/jmh/java} (the harnesses are
 * JUnit classes too) and checks each file that Surefire's include patterns match or that declares a test method.
 */
@Tag("unit")
class LaneTagTest {
    static final List<String> LANES = List.of("unit", "gate", "qualification");
    private static final Pattern LANE_TAG = Pattern.compile("^@Tag\\(\"([a-z]+)\"\\)", Pattern.MULTILINE);
    private static final Pattern TEST_METHOD = Pattern.compile(
            "@(Test|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate)\\b");
    /** Surefire's includes in the root pom.xml. */
    private static final Pattern SUREFIRE_INCLUDED = Pattern.compile(".*(Test|Tests|Properties)\\.java");

    private static final Pattern PROFILE = Pattern.compile("<profile>\\s*<id>(perf-[a-z0-9-]+)</id>(.*?)</profile>",
            Pattern.DOTALL);

    /**
     * A perf profile names a harness class, which is tagged {@code qualification}; unless the profile also selects
     * that lane, the default {@code !qualification} expression filters the harness out and the profile "passes"
     * with 0 tests run ({@code failIfNoSpecifiedTests} is false because the other reactor modules have no such
     * class). Found when {@code scripts/bench restore} reported success and measured nothing.
     */
    @Test
    @DisplayName("every perf-* profile of the root pom.xml selects the qualification lane, so its harness runs")
    void perfProfilesSelectQualification() throws IOException {
        Path root = Path.of(System.getProperty("orbitkv.root", "..")).toAbsolutePath().normalize();
        Matcher m = PROFILE.matcher(Files.readString(root.resolve("pom.xml")));
        List<String> profiles = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        while (m.find()) {
            profiles.add(m.group(1));
            if (!m.group(2).contains("<orbitkv.test.groups>qualification</orbitkv.test.groups>")) {
                missing.add(m.group(1));
            }
        }
        assertThat(profiles).as("perf profiles found in the root pom.xml").contains("perf-restore", "perf-routes");
        assertThat(missing).as("perf profiles whose harness the default lane filter would skip").isEmpty();
    }

    @Test
    @DisplayName("every test class of every module carries exactly one lane tag: unit, gate or qualification")
    void everyTestClassHasOneLane() throws IOException {
        Path root = Path.of(System.getProperty("orbitkv.root", "..")).toAbsolutePath().normalize();
        Map<String, List<String>> lanesByFile = new TreeMap<>();
        try (Stream<Path> modules = Files.list(root)) {
            for (Path module : modules.filter(Files::isDirectory).sorted().toList()) {
                for (String sources : List.of("src/test/java", "src/jmh/java")) {
                    Path dir = module.resolve(sources);
                    if (!Files.isDirectory(dir)) {
                        continue;
                    }
                    try (Stream<Path> walk = Files.walk(dir)) {
                        for (Path p : walk.filter(x -> x.toString().endsWith(".java")).toList()) {
                            String text = Files.readString(p);
                            boolean included = SUREFIRE_INCLUDED.matcher(p.getFileName().toString()).matches();
                            if (included || TEST_METHOD.matcher(text).find()) {
                                lanesByFile.put(root.relativize(p).toString(), lanes(text));
                            }
                        }
                    }
                }
            }
        }
        Map<String, Long> perLane = new TreeMap<>();
        List<String> wrong = new ArrayList<>();
        lanesByFile.forEach((file, lanes) -> {
            if (lanes.size() == 1 && LANES.contains(lanes.getFirst())) {
                perLane.merge(lanes.getFirst(), 1L, Long::sum);
            } else {
                wrong.add(file + " " + lanes);
            }
        });
        System.out.println("LANES " + lanesByFile.size() + " test classes: " + perLane);
        // Today's suite has 143 Surefire-included classes plus 7 harnesses: a scan that finds far fewer read the wrong root.
        assertThat(lanesByFile).as("test classes found under " + root).hasSizeGreaterThan(140);
        assertThat(wrong).as("test classes without exactly one lane tag @Tag(\"unit\"|\"gate\"|\"qualification\") "
                + "(docs/testing.md says which lane)").isEmpty();
    }

    /** The {@code @Tag} values at the start of a line (class-level annotations in this code base's layout). */
    private static List<String> lanes(String text) {
        List<String> found = new ArrayList<>();
        Matcher m = LANE_TAG.matcher(text);
        while (m.find()) {
            found.add(m.group(1));
        }
        return found;
    }
}
