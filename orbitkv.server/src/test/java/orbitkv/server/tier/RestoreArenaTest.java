package orbitkv.server.tier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The restore arena (issue 24 item 2): reused extents, a counted fallback when fragmented, no file left behind. */
@Tag("unit")
class RestoreArenaTest {
    @Test
    @DisplayName("INV-9 extents are reused after free: the same bytes serve the next restore, held bytes return to 0")
    void reuse(@TempDir Path dir) throws IOException {
        try (RestoreArena arena = RestoreArena.map(dir, 4096)) {
            RestoreArena.Extent a = arena.allocate(1000);
            assertThat(a.segment().byteSize()).isEqualTo(1000);
            a.segment().set(java.lang.foreign.ValueLayout.JAVA_BYTE, 7, (byte) 0x5a);
            assertThat(arena.heldBytes()).isEqualTo(1024);
            arena.free(a);
            assertThat(arena.heldBytes()).isZero();
            RestoreArena.Extent b = arena.allocate(1000);
            assertThat(b.offset()).as("first fit takes the freed extent again").isEqualTo(a.offset());
            assertThat(b.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 7))
                    .as("reused memory is not zero-filled again (the record overwrites it)").isEqualTo((byte) 0x5a);
            assertThat(arena.highWaterBytes()).isEqualTo(1024);
            assertThatThrownBy(() -> {
                arena.free(b);
                arena.free(b);
            }).isInstanceOf(IllegalStateException.class).hasMessageContaining("double free");
        }
    }

    @Test
    @DisplayName("INV-9 fragmented free space refuses the extent and counts the fallback; the file is unlinked at once")
    void fragmentationFallsBackCounted(@TempDir Path dir) throws IOException {
        try (RestoreArena arena = RestoreArena.map(dir, 4 * 64)) {
            RestoreArena.Extent[] e = new RestoreArena.Extent[4];
            for (int i = 0; i < 4; i++) {
                e[i] = arena.allocate(64);
            }
            assertThat(arena.allocate(1)).as("full").isNull();
            arena.free(e[0]);
            arena.free(e[2]);
            assertThat(arena.allocate(128)).as("128 bytes free, but not adjacent").isNull();
            assertThat(arena.fallbacksTotal()).isEqualTo(2);
            try (var files = Files.list(dir)) {
                assertThat(files.toList()).as("no arena file left to reclaim after a crash").isEmpty();
            }
        }
    }

    @Test
    @DisplayName("a closed arena places nothing (the caller's direct-buffer fallback), and frees are no-ops")
    void closed(@TempDir Path dir) throws IOException {
        RestoreArena arena = RestoreArena.map(dir, 4096);
        RestoreArena.Extent a = arena.allocate(64);
        arena.close();
        assertThat(arena.allocate(64)).isNull();
        arena.free(a);
        assertThat(arena.fallbacksTotal()).isEqualTo(1);
    }
}
