package orbitkv.server.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import orbitkv.membership.ClusterIdentity;
import picocli.CommandLine;

/**
 * {@code orbitkv --version}: the build version, the protocol string, and the boot-layer module list
 * (so an operator can see that the image holds named modules only).
 */
final class VersionProvider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
        List<String> lines = new ArrayList<>();
        lines.add("orbitkv " + version());
        lines.add("protocol " + ClusterIdentity.PROTOCOL);
        lines.add("runtime Java " + Runtime.version());
        lines.add("boot layer modules:");
        ModuleLayer.boot().modules().stream()
                .sorted(Comparator.comparing(Module::getName))
                .forEach(m -> lines.add("  " + m.getName()
                        + m.getDescriptor().rawVersion().map(v -> "@" + v).orElse("")));
        return lines.toArray(String[]::new);
    }

    static String version() {
        try (InputStream in = VersionProvider.class.getResourceAsStream("/orbitkv/server/version.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
