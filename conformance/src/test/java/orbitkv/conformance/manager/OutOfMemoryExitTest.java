package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import orbitkv.conformance.docs.MarkdownTable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 33: a Manager that ran out of memory stayed alive as a zombie (its HTTP dead, its lease lapsed, SIGTERM
 * ignored). The image's launcher now sets {@code -XX:+ExitOnOutOfMemoryError} (dist/pom.xml's jlink
 * {@code --add-options}), so the JVM exits and a supervisor restarts it; test launches ({@link ManagerProcess}) set
 * it too.
 */
@Tag("unit")
class OutOfMemoryExitTest {
    private static final Pattern ADD_OPTIONS = Pattern.compile("<argument>--add-options=([^<]*)</argument>");

    /** The JVM options jlink bakes into the image's launcher. */
    static List<String> imageJvmOptions() throws IOException {
        String pom = Files.readString(MarkdownTable.root().resolve("dist/pom.xml"), StandardCharsets.UTF_8);
        Matcher m = ADD_OPTIONS.matcher(pom);
        assertThat(m.find()).as("dist/pom.xml passes --add-options to jlink").isTrue();
        return Arrays.asList(m.group(1).strip().split("\\s+"));
    }

    @Test
    @DisplayName("issue 33: a Manager out of memory stayed alive as a zombie -> the image's launcher options make a JVM"
            + " whose worker thread runs out of heap exit with status 3")
    void aManagerOutOfMemoryStayedAliveAsAZombie(@TempDir Path dir) throws Exception {
        List<String> options = imageJvmOptions();
        assertThat(options).contains(ManagerProcess.EXIT_ON_OUT_OF_MEMORY);
        // A program whose non-main thread exhausts the heap while main waits: without the option it lives on.
        Path program = dir.resolve("Exhaust.java");
        Files.writeString(program, """
                public class Exhaust {
                    public static void main(String[] a) throws Exception {
                        Thread t = new Thread(() -> {
                            java.util.List<long[]> hold = new java.util.ArrayList<>();
                            while (true) hold.add(new long[1 << 16]);
                        });
                        t.start();
                        Thread.sleep(Long.MAX_VALUE);
                    }
                }
                """);
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElseThrow());
        // the image's memory and exit options; the module options name modules only the image holds
        for (String o : options) {
            if (o.startsWith("-X")) {
                cmd.add(o.startsWith("-Xmx") ? "-Xmx32m" : o);
            }
        }
        cmd.add(program.toString());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("out").toFile()).start();
        try {
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the JVM ended after OutOfMemoryError (%s)", cmd).isTrue();
            assertThat(p.exitValue()).as("exit status of -XX:+ExitOnOutOfMemoryError").isEqualTo(3);
        } finally {
            p.destroyForcibly();
        }
    }
}
