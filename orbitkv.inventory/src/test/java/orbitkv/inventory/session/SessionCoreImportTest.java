package orbitkv.inventory.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The session cores are sans-I/O (issue 38 item 6): they import no gRPC or Netty, start no thread, use no executor
 * or timer, and never read a clock; time comes in as an argument of every step. The gRPC shells move frames and
 * timer events only, so a core is driven alike by a Manager and by {@code ProtocolSimulator}.
 */
@Tag("unit")
class SessionCoreImportTest {
    private static final Path SESSION = Path.of("src/main/java/orbitkv/inventory/session");
    /** What a sans-I/O core must not name: I/O stacks, threads and executors, timers and clocks. */
    private static final List<Pattern> FORBIDDEN = List.of(Pattern.compile("import\\s+io\\.grpc"),
            Pattern.compile("import\\s+io\\.netty"), Pattern.compile("Executor"), Pattern.compile("\\bThread\\b"),
            Pattern.compile("\\bTimer\\b"), Pattern.compile("ProtocolClock"), Pattern.compile("System\\.nanoTime"),
            Pattern.compile("System\\.currentTimeMillis"), Pattern.compile("Instant\\.now"), Pattern.compile("\\bsynchronized\\b"),
            Pattern.compile("\\.await\\("), Pattern.compile("WakeSignal"));

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"RequesterCore.java", "RequesterFrames.java", "RequesterState.java", "SourceCore.java", "SourcePump.java",
            "SourceInbound.java", "SourceState.java", "FrameCheck.java", "SendScheduler.java", "SendPriority.java"})
    @DisplayName("issue 38 a session core imports no io.grpc or io.netty, starts no thread, uses no executor or timer, reads no clock")
    void coreIsSansIo(String file) throws IOException {
        String code = stripComments(Files.readString(SESSION.resolve(file)));
        for (Pattern p : FORBIDDEN) {
            assertThat(p.matcher(code).find()).as(file + " names " + p.pattern()).isFalse();
        }
    }

    /** Comments may name what the code must not use (the javadoc says why); only code counts. */
    private static String stripComments(String java) {
        return java.replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\\n]*", "");
    }
}
