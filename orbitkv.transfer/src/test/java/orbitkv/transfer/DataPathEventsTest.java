package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
import orbitkv.inventory.Medium;
import orbitkv.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 37 item 5 (docs/operations.md, flight-recorder events): a recording that enables {@code orbitkv.DataExchange}
 * and {@code orbitkv.DataServe} gets one event per answered READ and AUTHORIZE on each side (and one per shared-memory
 * copy), with every stage timed;
 * a recording that does not enable them gets none (they are off by default).
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DataPathEventsTest {
    private static final int SIZE = 5000;
    private TransferFixture f;
    private final Arena arena = Arena.ofShared();
    @TempDir
    Path tmp;

    @AfterEach
    void stop() throws IOException {
        f.close();
        arena.close();
    }

    /** Two one-block grants, each READ once over TCP: the first grant over gRPC, the second on the data channel. */
    private void twoReads() {
        for (int i = 1; i <= 2; i++) {
            long seq = f.payloads.putDram(TransferFixture.key(i), TransferFixture.payload(SIZE, 1, i));
            Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(i), Medium.DRAM, seq)));
            MemorySegment dst = TransferFixture.destination(arena, SIZE);
            ReadHandle h = f.engine.read(g, 0, Destination.of(dst), BackendPolicy.TCP_ONLY, Duration.ofSeconds(10));
            assertThat(TransferFixture.await(h)).isInstanceOf(ReadResult.Completed.class);
        }
        // the source's event commits before its served-READ count moves (same write listener)
        Await.inJvm("both READs served", Duration.ofSeconds(10),
                () -> f.source.status().readsServed().values().stream().mapToLong(Long::longValue).sum() == 2);
    }

    private List<RecordedEvent> recorded(Recording r) throws IOException {
        r.stop();
        Path file = Files.createTempFile(tmp, "data-path", ".jfr");
        r.dump(file);
        return RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().startsWith("orbitkv.")).toList();
    }

    private static List<RecordedEvent> of(List<RecordedEvent> events, String type, String kind) {
        return events.stream().filter(e -> e.getEventType().getName().equals(type))
                .filter(e -> e.getString("kind").equals(kind)).toList();
    }

    @Test
    @DisplayName("issue 37 item 5 enabled, each answered READ and AUTHORIZE is one event on each side, every stage timed")
    void enabledEventsTimeEveryStage() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()));
        List<RecordedEvent> events = new CopyOnWriteArrayList<>();
        try (RecordingStream stream = new RecordingStream()) {
            stream.setReuse(false);
            for (String type : List.of("orbitkv.DataExchange", "orbitkv.DataServe")) {
                stream.enable(type);
                stream.onEvent(type, events::add);
            }
            stream.startAsync();
            twoReads();
            long seq = f.payloads.putDram(TransferFixture.key(3), TransferFixture.payload(SIZE, 1, 3));
            Grant g = f.grant(List.of(new BlockRef(TransferFixture.key(3), Medium.DRAM, seq)));
            ReadHandle h = f.engine.read(g, 0, Destination.of(TransferFixture.destination(arena, SIZE)),
                    BackendPolicy.SHARED_MEMORY_PREFERRED, Duration.ofSeconds(10));
            assertThat(TransferFixture.await(h)).isInstanceOf(ReadResult.Completed.class);
            // requester: 2 READs, 2 AUTHORIZEs, 1 copy; source: 2 READs, 2 AUTHORIZEs (streamed about once a second)
            Await.inJvm("9 data-path events streamed", Duration.ofSeconds(20), () -> events.size() >= 9);
        }
        assertThat(events).hasSize(9);
        assertThat(of(events, "orbitkv.DataExchange", "READ-SHM")).singleElement().satisfies(e -> {
            assertThat(e.getLong("payloadBytes")).isEqualTo(SIZE);
            assertThat(e.getString("outcome")).isEqualTo("Completed");
            assertThat(e.getLong("bodyNanos")).isPositive();
        });
        List<RecordedEvent> reads = of(events, "orbitkv.DataExchange", "READ");
        assertThat(reads).hasSize(2).allSatisfy(e -> {
            assertThat(e.getLong("payloadBytes")).isEqualTo(SIZE);
            assertThat(e.getString("outcome")).isEqualTo("Completed");
            assertThat(e.getLong("handoffNanos")).isNotNegative();
            assertThat(e.getLong("answerWaitNanos")).isPositive();
            assertThat(e.getLong("bodyNanos")).isNotNegative();
        });
        assertThat(of(events, "orbitkv.DataExchange", "AUTHORIZE")).as("the later two grants were asked on the data channel")
                .hasSize(2).allSatisfy(e -> assertThat(e.getString("outcome")).isEqualTo("Answered"));
        assertThat(of(events, "orbitkv.DataServe", "READ")).hasSize(2).allSatisfy(e -> {
            assertThat(e.getLong("payloadBytes")).isEqualTo(SIZE);
            assertThat(e.getBoolean("written")).isTrue();
            assertThat(e.getLong("prepareNanos")).isPositive();
            assertThat(e.getLong("writeNanos")).isNotNegative();
        });
        assertThat(of(events, "orbitkv.DataServe", "AUTHORIZE")).hasSize(2)
                .allSatisfy(e -> assertThat(e.getLong("payloadBytes")).isPositive());
    }

    @Test
    @DisplayName("issue 37 item 5 a recording that does not enable them gets no data-path events (off by default)")
    void offByDefault() throws Exception {
        f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()));
        List<RecordedEvent> events;
        try (Recording r = new Recording()) {
            r.enable("jdk.ThreadStart"); // a recording runs, with the JDK's own event only
            r.start();
            twoReads();
            events = recorded(r);
        }
        assertThat(events).isEmpty();
    }
}
