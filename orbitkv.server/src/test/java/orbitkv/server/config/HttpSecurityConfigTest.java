package orbitkv.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 33's HTTP settings: the read token file and its relations to the write token, the per-client body share. */
@Tag("unit")
class HttpSecurityConfigTest {
    @TempDir
    Path dir;

    private Path file(String name, String content, String mode) throws Exception {
        Path f = dir.resolve(name);
        Files.writeString(f, content);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(mode));
        return f;
    }

    private static RawValues standalone() {
        return new RawValues().put(Setting.STANDALONE, "true");
    }

    @Test
    @DisplayName("OPS-5 BND-6 --http-read-token-file: the file rules of --http-token-file, named after the read option; requires a different --http-token-file")
    void readTokenFile() throws Exception {
        Path write = file("write", "writer-token-0123456789\n", "rw-------");
        Path read = file("read", "reader-token-0123456789\n", "rw-------");
        ManagerConfig c = ManagerConfig.from(standalone().put(Setting.HTTP_TOKEN_FILE, write.toString())
                .put(Setting.HTTP_READ_TOKEN_FILE, read.toString()));
        assertThat(c.http().readToken()).isPresent();
        assertThat(c.http().readToken().get().matches("Bearer reader-token-0123456789")).isTrue();
        assertThat(c.http().token().get().matches("Bearer reader-token-0123456789")).isFalse();

        Path shared = file("shared", "reader-token-0123456789\n", "rw-r--r--");
        assertThatThrownBy(() -> ManagerConfig.from(standalone().put(Setting.HTTP_TOKEN_FILE, write.toString())
                .put(Setting.HTTP_READ_TOKEN_FILE, shared.toString()))).isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("--http-read-token-file " + shared + " is accessible by others");
        assertThatThrownBy(() -> ManagerConfig.from(standalone().put(Setting.HTTP_READ_TOKEN_FILE, read.toString())))
                .isInstanceOf(ConfigException.class).hasMessageStartingWith("--http-read-token-file requires --http-token-file");
        Path same = file("same", "writer-token-0123456789", "r--------");
        assertThatThrownBy(() -> ManagerConfig.from(standalone().put(Setting.HTTP_TOKEN_FILE, write.toString())
                .put(Setting.HTTP_READ_TOKEN_FILE, same.toString()))).isInstanceOf(ConfigException.class)
                .hasMessage("--http-read-token-file and --http-token-file must hold different tokens: a reader would be able to write");
    }

    @Test
    @DisplayName("INV-9 --http-body-bytes-in-flight-per-client-max: default 512MiB; the body progress minimum default is 8MiB per window")
    void defaults() {
        ManagerConfig c = ManagerConfig.from(standalone());
        assertThat(c.http().bodyBytesInFlightPerClientMax()).isEqualTo(512L << 20);
        assertThat(c.http().bodyProgressBytesMin()).isEqualTo(8L << 20);
        assertThat(c.http().readToken()).isEmpty();
    }
}
