package orbitkv.conformance.etcd;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * How the etcd fixture runs etcd (docs/operations.md, "etcd in tests"). The selection is automatic:
 *
 * <ol>
 *   <li>{@code ORBITKV_ETCD_RUNTIME=binary|testcontainers} forces one runtime;</li>
 *   <li>otherwise the local {@code etcd} binary (Debian {@code etcd-server}) when it exists: real local
 *       processes can be killed, SIGSTOPped and continued by PID, which the fault gates need;</li>
 *   <li>otherwise Testcontainers when a Docker engine answers ({@code docker info} exits 0 within 5 s);</li>
 *   <li>otherwise the run fails, never skips, with a message naming the Debian package {@code etcd-server}
 *       (the same with {@code CI=true}, where the message says CI must install it).</li>
 * </ol>
 */
public final class EtcdRuntimeSelection {
    /** Default location of the Debian binary. */
    public static final Path DEBIAN_ETCD = Path.of("/usr/bin/etcd");

    /** Whether a Docker engine answers; injected so the selection is unit-testable. */
    @FunctionalInterface
    public interface DockerProbe {
        boolean engineAnswers();

        /** {@code docker info} with a 5 s bound: exit code 0 means an engine answers. */
        static DockerProbe dockerInfo() {
            return () -> {
                try {
                    Process p = new ProcessBuilder("docker", "info").redirectErrorStream(true)
                            .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
                    if (!p.waitFor(5, TimeUnit.SECONDS)) {
                        p.destroyForcibly();
                        return false;
                    }
                    return p.exitValue() == 0;
                } catch (java.io.IOException e) {
                    return false;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            };
        }
    }

    /** The chosen runtime. */
    public sealed interface Selection {
        record LocalBinary(Path etcd) implements Selection {}

        record Testcontainers() implements Selection {}

        record Missing(String message) implements Selection {}
    }

    private EtcdRuntimeSelection() {}

    /** The selection for this process's environment. */
    public static Selection select() {
        Path onPath = findOnPath("etcd");
        return select(System.getenv(), onPath != null ? onPath : DEBIAN_ETCD, DockerProbe.dockerInfo());
    }

    /** The selection rule itself (pure apart from the probe and a file-existence check). */
    public static Selection select(Map<String, String> env, Path etcdBinary, DockerProbe docker) {
        Objects.requireNonNull(env, "env");
        boolean binary = etcdBinary != null && Files.isExecutable(etcdBinary);
        String forced = env.getOrDefault("ORBITKV_ETCD_RUNTIME", "");
        boolean ci = "true".equalsIgnoreCase(env.getOrDefault("CI", ""));
        switch (forced) {
            case "binary" -> {
                return binary ? new Selection.LocalBinary(etcdBinary) : missing(ci, etcdBinary);
            }
            case "testcontainers" -> {
                return docker.engineAnswers() ? new Selection.Testcontainers()
                        : new Selection.Missing("ORBITKV_ETCD_RUNTIME=testcontainers but no Docker engine answers `docker info`");
            }
            case "" -> { }
            default -> {
                return new Selection.Missing("ORBITKV_ETCD_RUNTIME must be 'binary' or 'testcontainers', got '" + forced + "'");
            }
        }
        if (binary) {
            return new Selection.LocalBinary(etcdBinary);
        }
        if (docker.engineAnswers()) {
            return new Selection.Testcontainers();
        }
        return missing(ci, etcdBinary);
    }

    private static Selection missing(boolean ci, Path etcdBinary) {
        String where = etcdBinary == null ? "etcd" : etcdBinary.toString();
        return new Selection.Missing((ci ? "CI=true: the real-etcd gates must run, but " : "")
                + "no etcd binary at " + where + " and no Docker engine answers: install the Debian package "
                + "etcd-server (apt-get install -y etcd-server etcd-client); real-etcd tests never skip");
    }

    static Path findOnPath(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(java.io.File.pathSeparator)) {
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }
}
