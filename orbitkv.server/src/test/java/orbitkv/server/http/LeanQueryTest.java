package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import orbitkv.server.incarnation.StandaloneMetadata;
import orbitkv.inventory.Scope;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.server.config.ListenAddress;
import orbitkv.server.net.NativeTransport;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import orbitkv.server.tier.SsdTier;
import orbitkv.testing.RawHttp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import orbitkv.server.api.BlockFraming;

/**
 * The lean prefix query (issue 35, G5): {@code "detail": "prefix"} answers coverage, view generation, the recoverable
 * prefix, its stop and one present flag per key, equal to the full answer's on every row of the query table (the
 * rows of HttpApiTest's query test plus SSD-only, absent-first and 128-key rows); a bad {@code detail} is 400 and
 * names the field. The distributed query rows are cross-checked the same way by conformance's ManagerApi.query.
 */
@Tag("unit")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LeanQueryTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private LocalTiers tiers;
    private HttpApiServer server;
    private RawHttp http;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        ResidencySequence sequence = new ResidencySequence();
        tiers = new LocalTiers(DramTier.open(dir, 1 << 20, 64, sequence),
                SsdTier.open(dir.resolve("ssd"), 1 << 20, 64, 64, 1 << 20, sequence), sequence);
        server = HttpApiServer.start(new ListenAddress("127.0.0.1", 0), NativeTransport.detect(), tiers,
                new StandaloneMetadata(null, Incarnation.random(new NodeId("n1"), new NodeEpoch(1)), Scope.all()),
                TestLimits.small());
        http = new RawHttp(server.boundAddress());
        List<BlockFraming.Block> blocks = new ArrayList<>();
        for (int k = 0; k < 130; k++) {
            if (k % 10 != 7) { // keys 7, 17, ... are never saved
                blocks.add(new BlockFraming.Block(key(k), HttpApiTest.payload(1, k, 64)));
            }
        }
        for (int from = 0; from < blocks.size(); from += 100) {
            RawHttp.Response r = http.post("/cache/save?namespace=model-a", BlockFraming.CONTENT_TYPE,
                    HttpApiTest.body(blocks.subList(from, Math.min(blocks.size(), from + 100))));
            assertThat(r.status()).as(r.text()).isEqualTo(200);
        }
        assertThat(http.post("/cache/sync", null, null).status()).isEqualTo(200);
        // key 3 only on SSD: the prefix continues through the other medium
        assertThat(http.postJson("/cache/evict", "{\"namespace\":\"model-a\",\"keys\":[\"" + hex(3) + "\"],\"medium\":\"DRAM\"}")
                .status()).isEqualTo(200);
    }

    @AfterAll
    void stop() throws Exception {
        server.close();
        tiers.close();
    }

    private static byte[] key(int k) {
        return new byte[] {(byte) 0xc0, (byte) (k >> 8), (byte) k};
    }

    private static String hex(int k) {
        return HexFormat.of().formatHex(key(k));
    }

    /** Rows: name, namespace, key indexes (-1 = a key nobody saved). */
    static Stream<Arguments> rows() {
        List<Integer> throughGap = new ArrayList<>();
        for (int k = 0; k < 9; k++) {
            throughGap.add(k);
        }
        List<Integer> long128 = new ArrayList<>();
        for (int k = 0; k < 130 && long128.size() < 128; k++) {
            if (k != 7) {
                long128.add(k);
            }
        }
        return Stream.of(
                Arguments.of("HttpApiTest.query: hit, hit, miss, hit", "model-a", List.of(1, 4, -1, 2)),
                Arguments.of("HttpApiTest.query: another namespace", "model-b", List.of(1)),
                Arguments.of("a miss first", "model-a", List.of(-1, 1, 2)),
                Arguments.of("through an SSD-only key", "model-a", List.of(2, 3, 4)),
                Arguments.of("complete", "model-a", List.of(0, 1, 2, 3, 4, 5, 6)),
                Arguments.of("up to a never-saved key", "model-a", throughGap),
                Arguments.of("a gap in 128 keys", "model-a", List.of(0, 1, 7, 8, 9)),
                Arguments.of("128 keys, one miss at 17", "model-a", long128));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    @DisplayName("G5 IDX-14 the lean answer's prefix, stop, coverage, generation and presence equal the full answer's")
    void leanEqualsFull(String name, String namespace, List<Integer> keyIndexes) throws Exception {
        StringBuilder keys = new StringBuilder();
        for (int k : keyIndexes) {
            keys.append(keys.isEmpty() ? "" : ",").append('"').append(k < 0 ? "ffffff" : hex(k)).append('"');
        }
        String body = "{\"namespace\":\"" + namespace + "\",\"keys\":[" + keys + "]";
        RawHttp.Response full = http.postJson("/cache/query", body + "}");
        RawHttp.Response explicitFull = http.postJson("/cache/query", body + ",\"detail\":\"full\"}");
        RawHttp.Response lean = http.postJson("/cache/query", body + ",\"detail\":\"prefix\"}");
        assertThat(List.of(full.status(), explicitFull.status(), lean.status())).containsOnly(200);
        JsonNode f = JSON.readTree(full.body());
        JsonNode l = JSON.readTree(lean.body());
        assertThat(JSON.readTree(explicitFull.body())).as("detail=full is the default answer").isEqualTo(f);
        List<String> fields = new ArrayList<>();
        l.fieldNames().forEachRemaining(fields::add);
        assertThat(fields).containsExactly("coverage", "view_generation", "recoverable_prefix", "prefix_stop", "present");
        for (String field : List.of("coverage", "view_generation", "recoverable_prefix", "prefix_stop")) {
            assertThat(l.get(field)).as(field).isEqualTo(f.get(field));
        }
        List<Boolean> expected = new ArrayList<>();
        f.get("candidates").forEach(c -> {
            boolean any = false;
            for (JsonNode r : c.get("replicas")) {
                any |= !r.get("stale").asBoolean();
            }
            expected.add(any);
        });
        List<Boolean> present = new ArrayList<>();
        l.get("present").forEach(p -> present.add(p.asBoolean()));
        assertThat(present).isEqualTo(expected);
        assertThat(lean.body().length).as("the lean answer is small").isLessThan(128 + 6 * keyIndexes.size());
    }

    @Test
    @DisplayName("G5 a detail that is not \"full\" or \"prefix\" is 400 INVALID_FIELD_VALUE naming it; a wrong type INVALID_FIELD_TYPE")
    void badDetailIsRefused() throws Exception {
        RawHttp.Response bad = http.postJson("/cache/query", "{\"namespace\":\"model-a\",\"keys\":[\"" + hex(1)
                + "\"],\"detail\":\"lean\"}");
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.text()).contains("INVALID_FIELD_VALUE").contains("detail must be \\\"full\\\" or \\\"prefix\\\", got \\\"lean\\\"");
        RawHttp.Response type = http.postJson("/cache/query", "{\"namespace\":\"model-a\",\"keys\":[\"" + hex(1)
                + "\"],\"detail\":1}");
        assertThat(type.status()).isEqualTo(400);
        assertThat(type.text()).contains("INVALID_FIELD_TYPE").contains("detail must be a string");
        RawHttp.Response nul = http.postJson("/cache/query", "{\"namespace\":\"model-a\",\"keys\":[\"" + hex(1)
                + "\"],\"detail\":null}");
        assertThat(nul.text()).contains("INVALID_FIELD_TYPE").contains("detail is optional");
    }
}
