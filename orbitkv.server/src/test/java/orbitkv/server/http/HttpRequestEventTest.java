package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingStream;
import orbitkv.inventory.Scope;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.server.api.BlockFraming;
import orbitkv.server.config.ListenAddress;
import orbitkv.server.incarnation.StandaloneMetadata;
import orbitkv.server.net.NativeTransport;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import orbitkv.server.tier.SsdTier;
import orbitkv.testing.Await;
import orbitkv.testing.RawHttp;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 37 item 5 (docs/operations.md, flight-recorder events): with {@code orbitkv.HttpRequest} enabled, every
 * answered API request is one event with its endpoint, status, answer size and four stage times.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpRequestEventTest {
    @Test
    @DisplayName("issue 37 item 5 each answered request is one orbitkv.HttpRequest event with endpoint, status, size and stages")
    void answeredRequestsAreRecorded(@TempDir Path dir) throws Exception {
        ResidencySequence sequence = new ResidencySequence();
        List<RecordedEvent> events = new CopyOnWriteArrayList<>();
        try (LocalTiers tiers = new LocalTiers(DramTier.open(dir, 64 * 1024, 64, sequence),
                SsdTier.open(dir.resolve("ssd"), 1 << 20, 64, 64, 1 << 20, sequence), sequence);
             RecordingStream stream = new RecordingStream()) {
            stream.enable("orbitkv.HttpRequest");
            stream.onEvent("orbitkv.HttpRequest", events::add);
            stream.startAsync();
            HttpApiServer server = HttpApiServer.start(new ListenAddress("127.0.0.1", 0), NativeTransport.detect(), tiers,
                    new StandaloneMetadata(null, Incarnation.random(new NodeId("n1"), new NodeEpoch(1)), Scope.all()),
                    TestLimits.small());
            try {
                RawHttp http = new RawHttp(server.boundAddress());
                byte[] body = HttpApiTest.body(List.of(new BlockFraming.Block(new byte[] {(byte) 0xb0, 1},
                        HttpApiTest.payload(7, 1, 3000))));
                assertThat(http.post("/cache/save?namespace=model-a", BlockFraming.CONTENT_TYPE, body).status()).isEqualTo(200);
                RawHttp.Response restored = http.postJson("/cache/restore",
                        "{\"namespace\": \"model-a\", \"keys\": [\"b001\"], \"deadline_ms\": 5000}");
                assertThat(restored.status()).isEqualTo(200);
                assertThat(http.postJson("/cache/restore", "{\"namespace\": 5}").status()).isEqualTo(400);
                Await.inJvm("three events streamed", Duration.ofSeconds(20), () -> events.size() >= 3);
                assertThat(events).extracting(e -> e.getString("endpoint") + " " + e.getInt("status"))
                        .containsExactlyInAnyOrder("save 200", "restore 200", "restore 400");
                assertThat(events).filteredOn(e -> e.getInt("status") == 200 && e.getString("endpoint").equals("restore"))
                        .singleElement().satisfies(e -> assertThat(e.getLong("answerBytes")).isEqualTo(restored.body().length));
                assertThat(events).allSatisfy(e -> {
                    assertThat(e.getBoolean("written")).isTrue();
                    for (String stage : List.of("receiveNanos", "queueNanos", "executeNanos", "writeNanos")) {
                        assertThat(e.getLong(stage)).as(stage).isNotNegative();
                    }
                    assertThat(e.getLong("executeNanos")).isPositive();
                });
            } finally {
                server.close();
            }
        }
    }
}
