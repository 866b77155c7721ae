package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.config.RawValues;
import orbitkv.server.config.Setting;
import orbitkv.server.runtime.StandaloneManager;
import orbitkv.testing.Await;
import orbitkv.testing.RawHttp;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine submitter API of the node-local admission window (issue 39; ROUTE-11) on an in-process standalone
 * Manager: an engine's P/D WRITE charge shows in status and metrics and fills the same lane the Manager's READs
 * charge; a queued charge is granted when bytes return; loss keeps bytes charged until termination; bad input is a
 * 400 that changes nothing; disabled answers 503. Gate lane (in-process Manager end to end).
 */
@Tag("gate")
class AdmissionApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long MIB4 = 4L << 20;

    @TempDir
    Path dir;

    private StandaloneManager start(RawValues values) throws Exception {
        return StandaloneManager.start(ManagerConfig.from(values.put(Setting.STANDALONE, "true")
                .put(Setting.HTTP_LISTEN, "127.0.0.1:0").put(Setting.DRAM, "64MiB").put(Setting.BLOCK_BYTES_MAX, "1MiB")
                .put(Setting.DRAM_DIR, Files.createTempDirectory(dir, "dram").toString())), HttpApiServer::bind);
    }

    private static JsonNode post(RawHttp http, String path, String body) throws Exception {
        RawHttp.Response r = http.postJson(path, body);
        assertThat(r.status()).as(path + " " + body + " -> " + r.text()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private static JsonNode loRx(RawHttp http) throws Exception {
        JsonNode status = JSON.readTree(http.get("/cache/metadata/status").body());
        for (JsonNode lane : status.get("admission").get("lanes")) {
            if (lane.get("nic").asText().equals("lo") && lane.get("direction").asText().equals("rx")) {
                return lane;
            }
        }
        throw new AssertionError("no lo/rx lane in " + status);
    }

    private static int pending(RawHttp http) {
        try {
            return loRx(http).get("pending").asInt();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String charge(long s, long bytes, long waitMs) {
        return "{\"submitter\":" + s + ",\"nic\":\"lo\",\"direction\":\"rx\",\"bytes\":" + bytes
                + ",\"deadline_ms\":30000,\"wait_ms\":" + waitMs + "}";
    }

    @Test
    @DisplayName("ROUTE-11 engine WRITE bytes charged through the API fill the Manager's lane; status and metrics show them")
    void engineChargesShareTheWindow() throws Exception {
        StandaloneManager m = start(new RawValues().put(Setting.ADMISSION_WINDOW_BYTES_MAX, "8MiB")
                .put(Setting.ADMISSION_RESERVE_PERCENT, "0").put(Setting.ADMISSION_LEASE_BATCH_BYTES_MAX, "4MiB"));
        try {
            RawHttp http = new RawHttp(m.httpAddress());
            long s = post(http, "/admission/register", "{\"kind\":\"engine-write\",\"instance\":\"vllm-0\"}")
                    .get("submitter").asLong();
            JsonNode g1 = post(http, "/admission/charge", charge(s, MIB4, 0));
            assertThat(g1.get("outcome").asText()).isEqualTo("granted");
            assertThat(g1.get("lane").asText()).isEqualTo("lo/rx");
            long l2 = post(http, "/admission/charge", charge(s, MIB4, 0)).get("lease").asLong();
            JsonNode full = post(http, "/admission/charge", charge(s, 1, 0));
            assertThat(full.get("outcome").asText()).isEqualTo("refused");
            assertThat(full.get("refusal").asText()).isEqualTo("window-full");
            JsonNode status = JSON.readTree(http.get("/cache/metadata/status").body()).get("admission");
            assertThat(status.get("manager_read_lane").asText()).isEqualTo("lo/rx");
            assertThat(status.get("charged_bytes_by_kind").get("engine-write").asLong()).isEqualTo(2 * MIB4);
            assertThat(status.get("refusals").get("window-full").asLong()).isEqualTo(1);
            assertThat(loRx(http).get("charged_bytes").asLong()).isEqualTo(2 * MIB4);
            String metrics = http.get("/metrics").text();
            assertThat(metrics).containsPattern("orbitkv_admission_charged_bytes\\{[^}]*nic=\"lo\"[^}]*\\} 8388608")
                    .contains("orbitkv_admission_charged_by_kind_bytes{kind=\"engine-write\"} 8388608");

            // bad input: 400, nothing changes
            assertThat(http.postJson("/admission/charge", charge(s, MIB4 + 1, 0)).status()).isEqualTo(400);
            assertThat(http.postJson("/admission/return", "{\"submitter\":" + s + ",\"lease\":999,\"bytes\":1,"
                    + "\"evidence\":\"transport-progress\"}").status()).isEqualTo(400);
            assertThat(http.postJson("/admission/charge", "{\"submitter\":" + s + "}").status()).isEqualTo(400);
            assertThat(loRx(http).get("charged_bytes").asLong()).isEqualTo(2 * MIB4);

            // a queued charge is granted when transport progress returns bytes
            CompletableFuture<JsonNode> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return post(new RawHttp(m.httpAddress()), "/admission/charge", charge(s, MIB4, 20_000));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            Await.until("the charge queued", Duration.ofSeconds(60), () -> pending(http) == 1);
            post(http, "/admission/return", "{\"submitter\":" + s + ",\"lease\":" + l2 + ",\"bytes\":" + MIB4
                    + ",\"evidence\":\"transport-progress\"}");
            assertThat(waiting.get(60, TimeUnit.SECONDS).get("outcome").asText()).isEqualTo("granted");

            // loss keeps the bytes charged; termination evidence returns them
            post(http, "/admission/lost", "{\"submitter\":" + s + "}");
            assertThat(loRx(http).get("quarantined_bytes").asLong()).isEqualTo(2 * MIB4);
            JsonNode untrusted = post(http, "/admission/return", "{\"submitter\":" + s + ",\"lease\":"
                    + g1.get("lease").asLong() + ",\"bytes\":1,\"evidence\":\"never-submitted\"}");
            assertThat(untrusted.get("refusal").asText()).isEqualTo("unspent-return-untrusted");
            assertThat(post(http, "/admission/terminate", "{\"submitter\":" + s + "}").get("bytes").asLong())
                    .isEqualTo(2 * MIB4);
            assertThat(loRx(http).get("charged_bytes").asLong()).isZero();
        } finally {
            m.shutdown();
            m.awaitStopped();
        }
    }

    @Test
    @DisplayName("ROUTE-11 with --admission-disabled the API answers 503 ADMISSION_DISABLED and status shows no window")
    void disabled() throws Exception {
        StandaloneManager m = start(new RawValues().put(Setting.ADMISSION_DISABLED, "true"));
        try {
            RawHttp http = new RawHttp(m.httpAddress());
            RawHttp.Response r = http.postJson("/admission/register", "{\"kind\":\"engine-write\",\"instance\":\"x\"}");
            assertThat(r.status()).isEqualTo(503);
            assertThat(r.text()).contains("ADMISSION_DISABLED");
            assertThat(JSON.readTree(http.get("/cache/metadata/status").body()).get("admission").isNull()).isTrue();
        } finally {
            m.shutdown();
            m.awaitStopped();
        }
    }
}
