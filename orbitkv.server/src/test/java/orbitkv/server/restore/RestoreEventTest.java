package orbitkv.server.restore;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import jdk.jfr.consumer.RecordingStream;
import orbitkv.inventory.StateKey;
import orbitkv.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 37 item 5 (docs/operations.md, flight-recorder events): with {@code orbitkv.Restore} enabled, every restore
 * that produced an answer is one event whose stages are disjoint steps of its timeline (their sum, with the rest
 * named {@code other}, is its total); without, there is none and no restore reads a clock for it.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RestoreEventTest {
    private static final int SIZE = 4000;
    private static final List<String> STAGES = List.of("evidenceNanos", "planNanos", "creditsNanos", "grantWaitNanos",
            "grantWakeNanos", "readNanos", "afterReadyNanos", "assembleNanos", "otherNanos");

    @TempDir
    Path dir;
    private DramPeerFixture f;

    @BeforeEach
    void open() throws Exception {
        f = new DramPeerFixture(dir, 64 * 1024, SIZE);
    }

    @AfterEach
    void close() throws Exception {
        f.close();
    }

    /** A restore of {@code keys}, each listed by the index at the fake engine's source only when {@code peer}. */
    private void restore(List<StateKey> keys, boolean peer) {
        RestoreResult r = f.restoration(keys, peer, false).run();
        assertThat(r.restoredKeys()).isEqualTo(keys.size());
        r.release();
    }

    @Test
    @DisplayName("issue 37 item 5 enabled, a restore is one orbitkv.Restore event whose disjoint stages add up to its total")
    void enabledEventTimesDisjointStages() {
        assertThat(f.tiers.save(DramPeerFixture.key(9), new byte[SIZE]).getClass().getSimpleName()).isEqualTo("Stored");
        List<RecordedEvent> events = new CopyOnWriteArrayList<>();
        try (RecordingStream stream = new RecordingStream()) {
            stream.setReuse(false);
            stream.enable("orbitkv.Restore");
            stream.onEvent("orbitkv.Restore", events::add);
            stream.startAsync();
            restore(List.of(DramPeerFixture.key(1), DramPeerFixture.key(2)), true);
            restore(List.of(DramPeerFixture.key(9)), false);
            Await.inJvm("two restore events streamed", Duration.ofSeconds(20), () -> events.size() >= 2);
        }
        assertThat(events).hasSize(2).allSatisfy(e -> {
            long sum = 0;
            for (String stage : STAGES) {
                assertThat(e.getLong(stage)).as(stage + " (one route: the stages do not overlap)").isNotNegative();
                sum += e.getLong(stage);
            }
            assertThat(sum).isEqualTo(e.getLong("totalNanos"));
            assertThat(e.getLong("totalNanos")).isPositive();
            assertThat(e.getInt("routes")).isEqualTo(1);
        });
        RecordedEvent peer = events.stream().filter(e -> e.getInt("keys") == 2).findFirst().orElseThrow();
        assertThat(peer.getInt("peerGrants")).isEqualTo(1);
        assertThat(peer.getLong("payloadBytes")).isEqualTo(2L * SIZE);
        assertThat(peer.getLong("creditsNanos")).as("the route's records were allocated").isPositive();
        RecordedEvent local = events.stream().filter(e -> e.getInt("keys") == 1).findFirst().orElseThrow();
        assertThat(local.getInt("peerGrants")).isZero();
        assertThat(local.getLong("payloadBytes")).isEqualTo(SIZE);
        for (String peerOnly : List.of("grantWaitNanos", "grantWakeNanos", "readNanos", "afterReadyNanos")) {
            assertThat(local.getLong(peerOnly)).as(peerOnly + " of a local restore").isZero();
        }
    }

    @Test
    @DisplayName("issue 37 item 5 a recording that does not enable it gets no orbitkv.Restore event, and no clock is read for it")
    void offByDefault() throws IOException {
        assertThat(RestoreStages.begin()).as("no recording enables the event").isSameAs(RestoreStages.OFF);
        assertThat(RestoreStages.OFF.now()).isZero();
        List<RecordedEvent> events;
        try (Recording r = new Recording()) {
            r.enable("jdk.ThreadStart"); // a recording runs, with the JDK's own event only
            r.start();
            restore(List.of(DramPeerFixture.key(1)), true);
            r.stop();
            Path file = Files.createTempFile(dir, "restore", ".jfr");
            r.dump(file);
            events = RecordingFile.readAllEvents(file).stream()
                    .filter(e -> e.getEventType().getName().startsWith("orbitkv.")).toList();
        }
        assertThat(events).isEmpty();
    }
}
