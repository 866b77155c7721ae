package orbitkv.server.restore;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import jdk.jfr.consumer.RecordingStream;
import orbitkv.index.Coverage;
import orbitkv.index.Replica;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.RouteSelection;
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import orbitkv.testing.Await;
import orbitkv.transfer.AuthorizeOutcome;
import orbitkv.transfer.BlockResult;
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
    private static final Namespace NS = Namespace.utf8("ns");
    private static final int SIZE = 4000;
    private static final List<String> STAGES = List.of("evidenceNanos", "planNanos", "creditsNanos", "grantWaitNanos",
            "grantWakeNanos", "readNanos", "afterReadyNanos", "assembleNanos", "otherNanos");

    @TempDir
    Path dir;
    private LocalTiers tiers;
    private final FakeEngine engine = new FakeEngine();
    private final RouteSelection routes = RouteSelection.create(RoutePolicy.defaults());

    @BeforeEach
    void open() throws Exception {
        ResidencySequence sequence = new ResidencySequence();
        tiers = new LocalTiers(DramTier.open(dir, 64 * 1024, 64, sequence), null, sequence, new CopyOutBudget(1 << 20));
        engine.autoComplete = true;
        engine.authorize = r -> new AuthorizeOutcome.Granted(FakeEngine.grant(r.blocks().stream()
                .map(b -> (BlockResult) new BlockResult.Granted(b, SIZE, 0)).toList()));
    }

    @AfterEach
    void close() throws Exception {
        assertThat(tiers.copyOut().heldBytes()).isZero();
        tiers.close();
        routes.close();
    }

    private static StateKey key(int i) {
        return new StateKey(NS, new byte[] {(byte) i});
    }

    /** A restore of {@code keys}, each listed by the index at the fake engine's source only when {@code peer}. */
    private RestoreResult restore(List<StateKey> keys, boolean peer) {
        List<List<Replica>> replicas = new ArrayList<>();
        for (int k = 0; k < keys.size(); k++) {
            replicas.add(peer ? List.of(new Replica(FakeEngine.SOURCE, Medium.DRAM, 7, SIZE, false)) : List.of());
        }
        IndexEvidence evidence = new IndexEvidence(Coverage.CompleteAtWatermarks, 1, replicas,
                Collections.nCopies(keys.size(), false));
        RestoreRequest req = new RestoreRequest(NS, keys, 30_000, Optional.empty(), false, false);
        RestoreResult r = new Restoration(tiers, evidence, Optional.of(engine.transfer(1 << 20, 4, true)), routes, 1 << 20,
                UnpooledByteBufAllocator.DEFAULT, req, System.nanoTime() + TimeUnit.SECONDS.toNanos(30)).run();
        assertThat(r.restoredKeys()).isEqualTo(keys.size());
        r.release();
        return r;
    }

    @Test
    @DisplayName("issue 37 item 5 enabled, a restore is one orbitkv.Restore event whose disjoint stages add up to its total")
    void enabledEventTimesDisjointStages() {
        assertThat(tiers.save(key(9), new byte[SIZE]).getClass().getSimpleName()).isEqualTo("Stored");
        List<RecordedEvent> events = new CopyOnWriteArrayList<>();
        try (RecordingStream stream = new RecordingStream()) {
            stream.setReuse(false);
            stream.enable("orbitkv.Restore");
            stream.onEvent("orbitkv.Restore", events::add);
            stream.startAsync();
            restore(List.of(key(1), key(2)), true);
            restore(List.of(key(9)), false);
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
            restore(List.of(key(1)), true);
            r.stop();
            Path file = Files.createTempFile(dir, "restore", ".jfr");
            r.dump(file);
            events = RecordingFile.readAllEvents(file).stream()
                    .filter(e -> e.getEventType().getName().startsWith("orbitkv.")).toList();
        }
        assertThat(events).isEmpty();
    }
}
