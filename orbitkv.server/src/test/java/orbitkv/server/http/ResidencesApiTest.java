package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import orbitkv.server.incarnation.StandaloneMetadata;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Scope;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.server.config.ListenAddress;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.SourceResidency;
import orbitkv.server.tier.SsdTier;
import orbitkv.server.net.NativeTransport;
import orbitkv.testing.RawHttp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import orbitkv.server.api.BlockFraming;
import orbitkv.server.api.ResidenceCursor;

/**
 * {@code GET /cache/metadata/residences} (issue 26 G4) of a Manager wired as every Manager is (tiers reporting to
 * an InventorySource), through raw sockets: paging in resident-map order with an opaque cursor, the namespace
 * filter, agreement with {@code /cache/query}'s local replicas, and every refusal (400 naming the parameter, no
 * state change).
 */
@Tag("unit")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ResidencesApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private LocalTiers tiers;
    private HttpApiServer server;
    private RawHttp http;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        SourceResidency residency = new SourceResidency(InventorySource.create(InventoryConfig.defaults()));
        tiers = new LocalTiers(DramTier.open(dir, 64 * 1024, 64, residency),
                SsdTier.open(dir.resolve("ssd"), 1 << 20, 64, 64, 1 << 20, residency), residency);
        server = HttpApiServer.start(new ListenAddress("127.0.0.1", 0), NativeTransport.detect(), tiers,
                new StandaloneMetadata(null, Incarnation.random(new NodeId("n1"), new NodeEpoch(1)), Scope.all()),
                TestLimits.small());
        http = new RawHttp(server.boundAddress());
        save("model-a", 0xa0, 5);
        save("model-b", 0xb0, 3);
        assertThat(http.post("/cache/sync", null, null).status()).isEqualTo(200);
    }

    @AfterAll
    void stop() throws Exception {
        server.close();
        tiers.close();
    }

    private void save(String ns, int first, int n) throws IOException {
        List<BlockFraming.Block> blocks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            blocks.add(new BlockFraming.Block(new byte[] {(byte) (first + i)}, new byte[100 + i]));
        }
        ByteBuf buf = Unpooled.buffer();
        BlockFraming.encode(buf, blocks);
        byte[] body = new byte[buf.readableBytes()];
        buf.readBytes(body);
        RawHttp.Response r = http.post("/cache/save?namespace=" + ns, BlockFraming.CONTENT_TYPE, body);
        assertThat(r.status()).as(r.text()).isEqualTo(200);
    }

    private JsonNode get(String path) throws IOException {
        RawHttp.Response r = http.get(path);
        assertThat(r.status()).as(path + ": " + r.text()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    /** Every page of a listing, following next_cursor; each entry as "ns key medium sequence size". */
    private List<String> all(String query, int limit) throws IOException {
        List<String> out = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            JsonNode page = get("/cache/metadata/residences?limit=" + limit + query + (cursor == null ? "" : "&cursor=" + cursor));
            assertThat(page.get("residences").size()).isLessThanOrEqualTo(limit);
            page.get("residences").forEach(r -> out.add(line(r)));
            cursor = page.get("next_cursor").isNull() ? null : page.get("next_cursor").asText();
            assertThat(++pages).isLessThan(100);
        } while (cursor != null);
        return out;
    }

    private static String line(JsonNode r) {
        return r.get("namespace").asText() + " " + r.get("key").asText() + " " + r.get("medium").asText() + " "
                + r.get("sequence").asLong() + " " + r.get("size").asLong();
    }

    /** What /cache/query lists as this Manager's local replicas, in resident-map order. */
    private List<String> fromQuery(String ns, int first, int n) throws IOException {
        List<String> out = new ArrayList<>();
        StringBuilder keys = new StringBuilder();
        for (int i = 0; i < n; i++) {
            keys.append(i == 0 ? "" : ",").append('"').append(HexFormat.of().toHexDigits((byte) (first + i))).append('"');
        }
        RawHttp.Response r = http.postJson("/cache/query", "{\"namespace\":\"" + ns + "\",\"keys\":[" + keys + "]}");
        for (JsonNode c : JSON.readTree(r.body()).get("candidates")) {
            for (JsonNode rep : c.get("replicas")) {
                out.add(ns + " " + c.get("key").asText() + " " + rep.get("medium").asText() + " "
                        + rep.get("sequence").asLong() + " " + rep.get("size").asLong());
            }
        }
        return out;
    }

    @Test
    @Order(1)
    @DisplayName("DIAG-1 every page size lists the same residences in resident-map order, equal to /cache/query's local replicas")
    void pagesAgree() throws IOException {
        List<String> expected = new ArrayList<>(fromQuery("model-a", 0xa0, 5));
        expected.addAll(fromQuery("model-b", 0xb0, 3));
        assertThat(expected).hasSize(16).anyMatch(s -> s.contains(" SSD ")).anyMatch(s -> s.contains(" DRAM "));
        for (int limit : new int[] {1, 3, 15, 16, 100, 1000}) {
            assertThat(all("", limit)).as("limit %d", limit).isEqualTo(expected);
        }
        JsonNode one = get("/cache/metadata/residences");
        assertThat(one.get("residences")).hasSize(16); // default limit 100
        assertThat(one.get("next_cursor").isNull()).isTrue();
        assertThat(one.get("head_sequence").asLong()).isEqualTo(16);
        assertThat(one.get("namespace").isNull()).isTrue();
        JsonNode exact = get("/cache/metadata/residences?limit=16");
        assertThat(exact.get("next_cursor").isNull()).as("a page that ends the listing has no cursor").isTrue();
        JsonNode short1 = get("/cache/metadata/residences?limit=15");
        assertThat(short1.get("next_cursor").isNull()).isFalse();
        JsonNode last = get("/cache/metadata/residences?limit=15&cursor=" + short1.get("next_cursor").asText());
        assertThat(last.get("residences")).hasSize(1);
        assertThat(last.get("next_cursor").isNull()).isTrue();
    }

    @Test
    @Order(2)
    @DisplayName("DIAG-1 the namespace filter lists exactly that namespace, also across pages; an unknown namespace lists nothing")
    void namespaceFilter() throws IOException {
        assertThat(all("&namespace=model-b", 2)).isEqualTo(fromQuery("model-b", 0xb0, 3));
        assertThat(all("&namespace=model-a", 4)).isEqualTo(fromQuery("model-a", 0xa0, 5));
        JsonNode none = get("/cache/metadata/residences?namespace=model-c");
        assertThat(none.get("residences")).isEmpty();
        assertThat(none.get("next_cursor").isNull()).isTrue();
        assertThat(none.get("namespace").asText()).isEqualTo("model-c");
        assertThat(get("/cache/metadata/residences?namespace=model").get("residences")).as("a prefix is not a namespace").isEmpty();
    }

    @Test
    @Order(3)
    @DisplayName("DIAG-1 PUB-8 an evict shows at once (only that medium goes, the head moves), and a cursor is a position: it survives the deletion of the residence it names")
    void evictAndCursorStability() throws IOException {
        JsonNode first = get("/cache/metadata/residences?namespace=model-a&limit=1");
        String cursor = first.get("next_cursor").asText();
        assertThat(line(first.get("residences").get(0))).startsWith("model-a a0 DRAM ");
        RawHttp.Response ev = http.postJson("/cache/evict", "{\"namespace\":\"model-a\",\"keys\":[\"a0\"],\"medium\":\"DRAM\"}");
        assertThat(ev.status()).as(ev.text()).isEqualTo(200);
        List<String> after = all("&namespace=model-a", 1000);
        assertThat(after).hasSize(9).noneMatch(s -> s.startsWith("model-a a0 DRAM")).anyMatch(s -> s.startsWith("model-a a0 SSD"));
        assertThat(after).isEqualTo(fromQuery("model-a", 0xa0, 5));
        JsonNode cont = get("/cache/metadata/residences?namespace=model-a&limit=1000&cursor=" + cursor);
        List<String> rest = new ArrayList<>();
        cont.get("residences").forEach(r -> rest.add(line(r)));
        assertThat(rest).isEqualTo(after); // a0 SSD sorts after the deleted a0 DRAM position
        assertThat(cont.get("head_sequence").asLong()).isEqualTo(17);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @Order(4)
    @DisplayName("DIAG-1 a bad limit, cursor or namespace is 400 naming it, and changes nothing")
    @CsvSource(delimiter = '|', value = {
        "limit=0                      | INVALID_QUERY_PARAMETER | limit",
        "limit=1001                   | INVALID_QUERY_PARAMETER | limit",
        "limit=-1                     | INVALID_QUERY_PARAMETER | limit",
        "limit=+5                     | INVALID_QUERY_PARAMETER | limit",
        "limit=1.5                    | INVALID_QUERY_PARAMETER | limit",
        "limit=x                      | INVALID_QUERY_PARAMETER | limit",
        "limit=                       | INVALID_QUERY_PARAMETER | limit",
        "limit=99999999999            | INVALID_QUERY_PARAMETER | limit",
        "limit=1&limit=2              | INVALID_QUERY_PARAMETER | limit",
        "limit=%G1                    | INVALID_QUERY_PARAMETER | limit",
        "cursor=                      | INVALID_QUERY_PARAMETER | cursor",
        "cursor=!!!!                  | INVALID_QUERY_PARAMETER | cursor",
        "cursor=AQ                    | INVALID_QUERY_PARAMETER | cursor",
        "cursor=Agdtb2RlbC1hAaAA      | INVALID_QUERY_PARAMETER | cursor",
        "cursor=AQdtb2RlbC1hAaAC      | INVALID_QUERY_PARAMETER | cursor",
        "cursor=AQdtb2RlbC1hAKAA      | INVALID_QUERY_PARAMETER | cursor",
        "cursor=AQdtb2RlbC1hAaAAAA    | INVALID_QUERY_PARAMETER | cursor",
        "cursor=AQdtb2RlbC1hAaAA=     | INVALID_QUERY_PARAMETER | cursor",
        "namespace=model-b&cursor=AQdtb2RlbC1hAaAA | INVALID_QUERY_PARAMETER | namespace",
        "namespace=                   | INVALID_NAMESPACE       | namespace",
        "namespace=%FF                | INVALID_NAMESPACE       | namespace",
        "namespace=a&namespace=b      | INVALID_QUERY_PARAMETER | namespace",
    })
    void refusals(String query, String code, String named) throws IOException {
        String before = all("", 1000) + " " + get("/cache/metadata/residences").get("head_sequence");
        RawHttp.Response r = http.get("/cache/metadata/residences?" + query);
        assertThat(r.status()).as(r.text()).isEqualTo(400);
        JsonNode err = JSON.readTree(r.body()).get("error");
        assertThat(err.get("code").asText()).isEqualTo(code);
        assertThat(err.get("message").asText()).contains(named);
        assertThat(all("", 1000) + " " + get("/cache/metadata/residences").get("head_sequence")).isEqualTo(before);
    }

    @Test
    @Order(5)
    @DisplayName("DIAG-1 the cursor a listing hands out decodes back to that position; a 256-byte namespace and a POST are refused")
    void cursorAndMethod() throws IOException {
        JsonNode p = get("/cache/metadata/residences?limit=1");
        String c = p.get("next_cursor").asText();
        assertThat(c).isEqualTo("AQdtb2RlbC1hAaAB"); // model-a, key a0, SSD (the DRAM copy was evicted above)
        assertThat(ResidenceCursor.decode(c)).isEqualTo(orbitkv.inventory.ResidencePosition.of(
                new orbitkv.inventory.ResidenceRecord(new orbitkv.inventory.StateKey(orbitkv.inventory.Namespace.utf8("model-a"),
                        new byte[] {(byte) 0xa0}), orbitkv.inventory.Medium.SSD, orbitkv.inventory.ResidenceRecord.Op.PUT, 1, 0)));
        RawHttp.Response longNs = http.get("/cache/metadata/residences?namespace=" + "n".repeat(256));
        assertThat(longNs.status()).isEqualTo(400);
        assertThat(longNs.text()).contains("INVALID_NAMESPACE").contains("1..255");
        RawHttp.Response post = http.post("/cache/metadata/residences", null, null);
        assertThat(post.status()).isEqualTo(405);
        assertThat(post.text()).contains("METHOD_NOT_ALLOWED").contains("accepts GET");
        assertThat(post.header("allow")).as("the 405 names the right method (docs/api.md)").isEqualTo("GET");
    }
}
