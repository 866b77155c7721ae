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

/** {@code --http-token-file}: the file rules checked at startup and the comparison (issue 20 item 9). */
@Tag("unit")
class BearerTokenTest {
    @TempDir
    Path dir;

    private Path file(String content, String mode) throws Exception {
        Path f = Files.createTempFile(dir, "token", "");
        Files.writeString(f, content);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(mode));
        return f;
    }

    @Test
    @DisplayName("OPS-5 BND-6 a token file must be private, one line of 16..1024 token characters; refusals name --http-token-file")
    void fileRules() throws Exception {
        BearerToken t = BearerToken.read(file("abcdefghij0123456789\n", "rw-------"));
        assertThat(t.matches("Bearer abcdefghij0123456789")).isTrue();
        assertThat(t.matches("bearer abcdefghij0123456789")).as("the scheme is case-insensitive").isTrue();
        assertThat(t.matches("Bearer abcdefghij012345678")).isFalse();
        assertThat(t.matches("Bearer abcdefghij01234567890")).isFalse();
        assertThat(t.matches("Basic abcdefghij0123456789")).isFalse();
        assertThat(t.matches(null)).isFalse();
        assertThat(t.toString()).doesNotContain("abcdefghij");
        Path shared = file("abcdefghij0123456789", "rw-r--r--");
        assertThatThrownBy(() -> BearerToken.read(shared)).isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("--http-token-file " + shared + " is accessible by others (rw-r--r--)");
        Path shortToken = file("short\n", "rw-------");
        assertThatThrownBy(() -> BearerToken.read(shortToken))
                .hasMessage("--http-token-file " + shortToken + " must hold one token of 16..1024 characters, got 5");
        Path twoLines = file("abcdefghij0123456789\nsecond", "rw-------");
        assertThatThrownBy(() -> BearerToken.read(twoLines)).hasMessageContaining("found a byte 0xa at index 20");
        Path padding = file("abcdefghij0123456789==", "r--------");
        assertThat(BearerToken.read(padding).matches("Bearer abcdefghij0123456789==")).isTrue();
    }
}
