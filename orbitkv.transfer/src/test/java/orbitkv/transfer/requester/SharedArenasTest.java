package orbitkv.transfer.requester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import orbitkv.transfer.frame.HostIdentity;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The requester's arena mappings: identity-checked, bounded, never unmapped while a READ uses them. */
@Tag("unit")
class SharedArenasTest {
    @TempDir
    Path dir;

    private IssuedGrant.ArenaRef ref(Path file) throws IOException {
        HostIdentity.FileIdentity id = HostIdentity.of(file);
        return new IssuedGrant.ArenaRef(file.toString(), id.device(), id.inode(), id.sizeBytes());
    }

    private Path arena(String name) throws IOException {
        return Files.write(dir.resolve(name), new byte[8192]);
    }

    @Test
    @DisplayName("a file of the right name but another inode (a replaced arena, another mount namespace) is never mapped")
    void identityChecked() throws Exception {
        Path a = arena("a");
        IssuedGrant.ArenaRef r = ref(a);
        Path replacement = arena("a.new"); // created while "a" exists: certainly another inode
        Files.move(replacement, a, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        try (SharedArenas arenas = new SharedArenas(4)) {
            assertThatThrownBy(() -> arenas.acquire(r)).isInstanceOf(SharedArenas.Unavailable.class)
                    .hasMessageContaining("is not the source's arena");
            assertThat(arenas.mapped()).isZero();
        }
    }

    @Test
    @DisplayName("INV-9 at most sharedArenasMappedMax mappings; the least recently used idle one goes; in-use ones never")
    void bounded() throws Exception {
        try (SharedArenas arenas = new SharedArenas(2)) {
            SharedArenas.Mapping m1 = arenas.acquire(ref(arena("1")));
            SharedArenas.Mapping m2 = arenas.acquire(ref(arena("2")));
            IssuedGrant.ArenaRef r3 = ref(arena("3"));
            assertThatThrownBy(() -> arenas.acquire(r3)).isInstanceOf(SharedArenas.Unavailable.class);
            arenas.release(m1);
            SharedArenas.Mapping m3 = arenas.acquire(r3);
            assertThat(arenas.mapped()).isEqualTo(2);
            assertThat(m2.segment.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0)).as("m2 still mapped").isZero();
            arenas.release(m2);
            arenas.release(m3);
            assertThatThrownBy(() -> arenas.release(m3)).isInstanceOf(IllegalStateException.class);
        }
    }
}
