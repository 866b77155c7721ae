package orbitkv.conformance.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The automatic runtime selection of the etcd fixture, with the Docker probe injected. */
@Tag("unit")
class EtcdRuntimeSelectionTest {
    @TempDir
    Path dir;

    private Path executable() throws IOException {
        Path p = dir.resolve("etcd");
        Files.writeString(p, "#!/bin/sh\n");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        return p;
    }

    @Test
    @DisplayName("a local binary wins, and Docker is not even probed")
    void binaryFirst() throws IOException {
        AtomicInteger probes = new AtomicInteger();
        var s = EtcdRuntimeSelection.select(Map.of(), executable(), () -> probes.incrementAndGet() > 0);
        assertThat(s).isEqualTo(new EtcdRuntimeSelection.Selection.LocalBinary(dir.resolve("etcd")));
        assertThat(probes).hasValue(0);
    }

    @Test
    @DisplayName("no binary and an answering engine: Testcontainers")
    void dockerWhenNoBinary() {
        var s = EtcdRuntimeSelection.select(Map.of(), dir.resolve("absent"), () -> true);
        assertThat(s).isInstanceOf(EtcdRuntimeSelection.Selection.Testcontainers.class);
    }

    @Test
    @DisplayName("nothing available: fail naming etcd-server, in CI and outside it (never skip)")
    void missingFails() {
        var local = EtcdRuntimeSelection.select(Map.of(), dir.resolve("absent"), () -> false);
        var ci = EtcdRuntimeSelection.select(Map.of("CI", "true"), dir.resolve("absent"), () -> false);
        assertThat(local).isInstanceOfSatisfying(EtcdRuntimeSelection.Selection.Missing.class,
                m -> assertThat(m.message()).contains("etcd-server").contains("never skip"));
        assertThat(ci).isInstanceOfSatisfying(EtcdRuntimeSelection.Selection.Missing.class,
                m -> assertThat(m.message()).startsWith("CI=true").contains("etcd-server"));
    }

    @Test
    @DisplayName("ORBITKV_ETCD_RUNTIME forces a runtime or fails naming the variable")
    void forced() throws IOException {
        Path etcd = executable();
        assertThat(EtcdRuntimeSelection.select(Map.of("ORBITKV_ETCD_RUNTIME", "testcontainers"), etcd, () -> true))
                .isInstanceOf(EtcdRuntimeSelection.Selection.Testcontainers.class);
        assertThat(EtcdRuntimeSelection.select(Map.of("ORBITKV_ETCD_RUNTIME", "testcontainers"), etcd, () -> false))
                .isInstanceOfSatisfying(EtcdRuntimeSelection.Selection.Missing.class,
                        m -> assertThat(m.message()).contains("no Docker engine answers"));
        assertThat(EtcdRuntimeSelection.select(Map.of("ORBITKV_ETCD_RUNTIME", "binary"), dir.resolve("absent"), () -> true))
                .isInstanceOf(EtcdRuntimeSelection.Selection.Missing.class);
        assertThat(EtcdRuntimeSelection.select(Map.of("ORBITKV_ETCD_RUNTIME", "podman"), etcd, () -> true))
                .isInstanceOfSatisfying(EtcdRuntimeSelection.Selection.Missing.class,
                        m -> assertThat(m.message()).contains("ORBITKV_ETCD_RUNTIME must be"));
    }
}
