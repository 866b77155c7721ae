package orbitkv.conformance.campaign;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * ERROR lines in the Managers' logs (issue 17 item 2: zero unexpected ERROR lines). Each schedule reads the
 * lines its processes added since the last scan; a line is expected only if an {@link Allowed} pattern, each
 * with its justification, matches it.
 */
final class LogScan {
    /** An ERROR line the campaign expects, and why it is right for the Manager to log it. */
    record Allowed(Pattern pattern, String why) {}

    /** The allowlist: empty until a justified expected ERROR exists. */
    static final List<Allowed> ALLOWED = List.of();

    /** SLF4J simple logger lines ({@code [thread] ERROR logger - message}) and JUL SEVERE records. */
    private static final Pattern ERROR = Pattern.compile("^\\[[^\\]]*\\] ERROR |^ERROR |^SEVERE: ");
    private final Map<Path, Integer> linesSeen = new HashMap<>();

    /** New unexpected ERROR lines in {@code files} since the last call, each prefixed by its file name. */
    List<String> unexpected(List<Path> files) throws IOException {
        List<String> out = new ArrayList<>();
        for (Path f : files) {
            if (!Files.exists(f)) {
                continue;
            }
            List<String> lines = Files.readAllLines(f, StandardCharsets.UTF_8);
            int from = linesSeen.getOrDefault(f, 0);
            for (int i = from; i < lines.size(); i++) {
                String l = lines.get(i);
                if (ERROR.matcher(l).find() && ALLOWED.stream().noneMatch(a -> a.pattern().matcher(l).find())) {
                    out.add(f.getFileName() + ": " + l);
                }
            }
            linesSeen.put(f, lines.size());
        }
        return out;
    }
}
