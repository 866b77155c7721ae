package orbitkv.server.tier;

import static orbitkv.server.tier.Payloads.key;
import static orbitkv.server.tier.Payloads.payload;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One Manager per SSD directory, arena files that name their owner and are reclaimed once it is gone
 * (issue 20 item 1). The real-process half (two Manager processes, kill -9) is
 * {@code orbitkv.conformance.manager.SharedDirectoryTest}.
 */
@Tag("unit")
class TierLockTest {
    @TempDir
    Path dir;

    private final RecordingListener listener = new RecordingListener();

    private static List<String> names(Path d) throws Exception {
        try (Stream<Path> s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    @DisplayName("OPS-4 a second SSD tier on a held directory is refused naming the holder, and deletes nothing")
    void secondOpenRefused() throws Exception {
        TierInstance first = TierInstance.random("node-a");
        try (SsdTier a = SsdTier.open(dir, first, 1 << 20, 4, 1 << 20, 8, 1 << 20, listener)) {
            long t = ((SsdTier.Submitted.Queued) Payloads.submit(a, key(1), payload(1, 1, 64))).ticket();
            assertThat(a.awaitWritten(t, 10_000)).isTrue();
            List<String> before = names(dir);
            assertThat(before).contains(SsdTier.LOCK_FILE).anyMatch(n -> n.matches("blk-node-a-" + first.id() + "-1\\.okv"));
            assertThatThrownBy(() -> SsdTier.open(dir, TierInstance.random("node-b"), 1 << 20, 4, 1 << 20, 8, 1 << 20, listener))
                    .isInstanceOf(LocalResourceRefused.class)
                    .hasMessageContaining("pid=" + ProcessHandle.current().pid())
                    .hasMessageContaining("instance=" + first.id())
                    .hasMessageContaining("node=node-a")
                    .hasMessageContaining("--ssd-dir");
            assertThat(names(dir)).isEqualTo(before);
            a.recordIncarnation("node-a/3/0d4f");
            assertThatThrownBy(() -> SsdTier.open(dir, TierInstance.random("node-b"), 1 << 20, 4, 1 << 20, 8, 1 << 20, listener))
                    .hasMessageContaining("incarnation=node-a/3/0d4f");
        }
        try (SsdTier again = SsdTier.open(dir, TierInstance.random("node-b"), 1 << 20, 4, 1 << 20, 8, 1 << 20, listener)) {
            assertThat(again.usage().blocks()).isZero();
            assertThat(names(dir)).containsExactly(SsdTier.LOCK_FILE);
        }
    }

    @Test
    @DisplayName("OPS-4 an arena whose owner is gone is reclaimed at the next open; a live owner's arena is left alone")
    void staleArenaReclaimed() throws Exception {
        Path stale = dir.resolve("orbitkv-dram-dead-0123456789abcdef.arena");
        Files.write(stale, new byte[4096]); // what a kill -9'd Manager leaves: a file whose lock is free
        Files.write(dir.resolve("operator-notes.txt"), new byte[3]);
        try (DramTier live = DramTier.open(dir, TierInstance.random("live"), 4096, 4, 4096, listener)) {
            assertThat(stale).doesNotExist();
            Path liveArena = live.arenaFile();
            try (DramTier other = DramTier.open(dir, TierInstance.random("other"), 4096, 4, 4096, listener)) {
                assertThat(liveArena).exists();
                assertThat(names(dir)).containsExactlyInAnyOrder(liveArena.getFileName().toString(),
                        other.arenaFile().getFileName().toString(), "operator-notes.txt");
                assertThat(live.put(key(1), payload(1, 1, 64))).isInstanceOf(SaveOutcome.Stored.class);
            }
        }
        assertThat(names(dir)).containsExactly("operator-notes.txt");
    }
}
