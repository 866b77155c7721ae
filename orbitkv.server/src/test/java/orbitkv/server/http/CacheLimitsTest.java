package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.config.RawValues;
import orbitkv.server.config.Setting;
import orbitkv.server.runtime.StandaloneManager;
import orbitkv.testing.RawHttp;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code GET /cache/limits} (issue 35, G2) of an in-process standalone Manager: every value comes from the running
 * configuration (each option changed from its default is read back changed), the endpoint is open even with a
 * bearer token, and only GET is allowed. Gate lane: the in-process standalone Manager end to end (docs/testing.md).
 */
@Tag("gate")
class CacheLimitsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private static final List<String> FIELDS = List.of("api_version", "block_bytes_max", "save_body_bytes_max",
            "json_body_bytes_max", "keys_per_request_max", "records_per_save_max", "key_bytes_max", "namespace_bytes_max",
            "restore_bytes_in_flight_max", "record_framing_bytes", "token_required", "read_token_required",
            "streamed_restore");

    private JsonNode limits(RawValues values) throws Exception {
        StandaloneManager m = StandaloneManager.start(ManagerConfig.from(values.put(Setting.STANDALONE, "true")
                .put(Setting.HTTP_LISTEN, "127.0.0.1:0").put(Setting.DRAM, "64MiB")
                .put(Setting.DRAM_DIR, Files.createTempDirectory(dir, "dram").toString())), HttpApiServer::bind);
        try {
            RawHttp http = new RawHttp(m.httpAddress());
            RawHttp.Response r = http.get("/cache/limits");
            assertThat(r.status()).as(r.text()).isEqualTo(200);
            assertThat(r.header("content-type")).startsWith("application/json");
            RawHttp.Response post = http.post("/cache/limits", null, null);
            assertThat(post.status()).isEqualTo(405);
            assertThat(post.header("allow")).isEqualTo("GET");
            return JSON.readTree(r.body());
        } finally {
            m.shutdown();
            m.awaitStopped();
        }
    }

    @Test
    @DisplayName("G2 BND-1 /cache/limits answers the defaults and, with every option changed, each changed value; open with a token")
    void limitsFollowTheRunningConfiguration() throws Exception {
        JsonNode defaults = limits(new RawValues());
        List<String> names = new ArrayList<>();
        defaults.fieldNames().forEachRemaining(names::add);
        assertThat(names).as("the documented fields, snake_case").containsExactlyInAnyOrderElementsOf(FIELDS);
        assertThat(defaults.get("api_version").asInt()).isEqualTo(1);
        assertThat(defaults.get("block_bytes_max").asLong()).isEqualTo(64L << 20);
        assertThat(defaults.get("save_body_bytes_max").asLong()).isEqualTo(256L << 20);
        assertThat(defaults.get("json_body_bytes_max").asLong()).isEqualTo(64L << 10);
        assertThat(defaults.get("restore_bytes_in_flight_max").asLong()).isEqualTo(256L << 20);
        assertThat(defaults.get("keys_per_request_max").asInt()).isEqualTo(128);
        assertThat(defaults.get("records_per_save_max").asInt()).isEqualTo(128);
        assertThat(defaults.get("key_bytes_max").asInt()).isEqualTo(64);
        assertThat(defaults.get("namespace_bytes_max").asInt()).isEqualTo(255);
        assertThat(defaults.get("record_framing_bytes").asInt()).isEqualTo(6);
        assertThat(defaults.get("token_required").asBoolean()).isFalse();
        assertThat(defaults.get("read_token_required").asBoolean()).isFalse();
        assertThat(defaults.get("streamed_restore").asBoolean()).as("issue 35 item 4: offered").isTrue();

        Path token = dir.resolve("token");
        Files.writeString(token, "limits-token-0123456789\n");
        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
        Path readToken = dir.resolve("read-token");
        Files.writeString(readToken, "limits-read-token-0123456789\n");
        Files.setPosixFilePermissions(readToken, PosixFilePermissions.fromString("rw-------"));
        JsonNode changed = limits(new RawValues().put(Setting.BLOCK_BYTES_MAX, "3MiB").put(Setting.SAVE_BODY_BYTES_MAX, "40MiB")
                .put(Setting.JSON_BODY_BYTES_MAX, "96KiB").put(Setting.RESTORE_BYTES_IN_FLIGHT_MAX, "48MiB")
                .put(Setting.HTTP_TOKEN_FILE, token.toString())
                .put(Setting.HTTP_READ_TOKEN_FILE, readToken.toString()));
        assertThat(changed.get("block_bytes_max").asLong()).isEqualTo(3L << 20);
        assertThat(changed.get("save_body_bytes_max").asLong()).isEqualTo(40L << 20);
        assertThat(changed.get("json_body_bytes_max").asLong()).isEqualTo(96L << 10);
        assertThat(changed.get("restore_bytes_in_flight_max").asLong()).isEqualTo(48L << 20);
        assertThat(changed.get("token_required").asBoolean()).as("open like /health, and says a token is needed").isTrue();
        assertThat(changed.get("read_token_required").asBoolean()).as("--http-read-token-file set: reads need a token").isTrue();
    }
}
