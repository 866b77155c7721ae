package orbitkv.conformance.campaign;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The root-side commands of the network-namespace fixtures ({@link NetnsHosts}, the manager package's shaped
 * link): a host command with a hard 20 s bound, and a best-effort HTTP probe of a Manager inside a namespace.
 */
public final class HostCommands {
    private HostCommands() {}

    /** Runs {@code cmd}; its combined output, or an IOException naming the command and its output. */
    public static String run(String... cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(20, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException(String.join(" ", cmd) + " failed: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + String.join(" ", cmd));
        }
        return out;
    }

    /** Runs {@code cmd} for clean-up: a failure means the thing is already gone. */
    public static void runQuietly(String... cmd) {
        try {
            run(cmd);
        } catch (IOException e) {
            // already gone
        }
    }

    /** GET {@code uri} with 1 s connect and 2 s read bounds; the body, or "" when it did not answer. */
    public static String http(URI uri) {
        try {
            HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
            c.setConnectTimeout(1000);
            c.setReadTimeout(2000);
            try (var in = c.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } finally {
                c.disconnect();
            }
        } catch (IOException e) {
            return "";
        }
    }
}
