package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.testing.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 40 items 1 and 2 with real Managers (separate processes, real etcd, loopback): A holds a chain, C declares
 * its first half with {@code POST /cache/prefetch} and then restores the whole chain with {@code store_local}; B,
 * which holds nothing, watches. The prefetched half is served from C's own DRAM and counted used; the other half is
 * READ from A and kept; every block C kept is a replica B's index lists under C (journaled like a save, ROUTE-12).
 */
@Tag("gate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SpeculationGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final String NS = "spec";
    private static final int BLOCKS = 4;
    private static final int SIZE = 64 << 10;

    private ManagerCluster cluster;
    private ManagerProcess a;
    private ManagerProcess b;
    private ManagerProcess c;

    @BeforeAll
    void start() throws Exception {
        cluster = ManagerCluster.format(ETCD, "specgate");
        a = cluster.launch("a", dir -> new ArrayList<>(List.of("--dram", "64MiB")));
        b = cluster.launch("b", dir -> new ArrayList<>(List.of("--dram", "64MiB")));
        c = cluster.launch("c", dir -> new ArrayList<>(List.of("--dram", "64MiB")));
        cluster.awaitMembers();
    }

    @AfterAll
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static String key(int i) {
        return String.format("%064x", 0x5e00 + i);
    }

    private static List<String> keys(int from, int to) {
        List<String> k = new ArrayList<>();
        for (int i = from; i < to; i++) {
            k.add(key(i));
        }
        return k;
    }

    private static String json(List<String> keys) {
        return keys.stream().map(k -> "\"" + k + "\"").toList().toString();
    }

    private static ManagerApi.Reply restore(ManagerApi api, List<String> keys, boolean storeLocal) {
        ManagerApi.Reply r = api.postJson("/cache/restore", "{\"namespace\": \"" + NS + "\", \"keys\": " + json(keys)
                + (storeLocal ? ", \"store_local\": true}" : "}"));
        assertThat(r.status()).as(r.text()).isEqualTo(200);
        return r;
    }

    @Test
    @DisplayName("ROUTE-12 ROUTE-13 a declared chain is prefetched and then used; store_local keeps a fetched chain; peers see C's new replicas")
    void prefetchThenRetain() {
        Map<String, byte[]> blocks = new LinkedHashMap<>();
        for (int i = 0; i < 2 * BLOCKS; i++) {
            blocks.put(key(i), ManagerApi.payload(7, i, SIZE));
        }
        assertThat(ManagerCluster.api(a).save(NS, blocks).status()).isEqualTo(200);
        ManagerCluster.published(c, 10_000, a);
        ManagerApi api = ManagerCluster.api(c);

        // chain X (keys 0..3): declared, prefetched, then restored from C's own DRAM
        ManagerApi.Reply p = api.postJson("/cache/prefetch", "{\"namespace\": \"" + NS + "\", \"keys\": "
                + json(keys(0, BLOCKS)) + ", \"deadline_ms\": 30000}");
        assertThat(p.status()).as(p.text()).isEqualTo(200);
        assertThat(p.json().get("accepted").asInt()).as(p.text()).isEqualTo(BLOCKS);
        Await.until("C prefetched chain X", BOUND,
                () -> api.status().at("/speculation/prefetched_blocks").asLong() == BLOCKS);
        ManagerApi.Reply x = restore(api, keys(0, BLOCKS), false);
        assertThat(x.header("X-OrbitKV-Route")).contains("local-dram[0," + BLOCKS + ")");
        // chain Y (keys 4..7): READ from A and kept (store_local); a plain restore of X before kept nothing
        ManagerApi.Reply y = restore(api, keys(BLOCKS, 2 * BLOCKS), true);
        assertThat(y.header("X-OrbitKV-Route")).contains("peer-dram");
        for (ManagerApi.Reply r : List.of(x, y)) {
            Map<String, byte[]> got = ManagerApi.unframe(r.body());
            assertThat(got).hasSize(BLOCKS);
            got.forEach((k, v) -> assertThat(v).as(k).isEqualTo(blocks.get(k)));
        }
        JsonNode spec = api.status().get("speculation");
        assertThat(spec.get("used_blocks").asLong()).as(spec.toString()).isEqualTo(BLOCKS);
        assertThat(spec.at("/kept_blocks/store-local").asLong()).as(spec.toString()).isEqualTo(BLOCKS);
        assertThat(spec.at("/kept_blocks/prefetch").asLong()).as(spec.toString()).isEqualTo(BLOCKS);
        assertThat(restore(api, keys(BLOCKS, 2 * BLOCKS), false).header("X-OrbitKV-Route"))
                .as("the kept chain is served locally now").contains("local-dram[0," + BLOCKS + ")");

        ManagerCluster.published(b, 10_000, a, c);
        String cNode = api.status().at("/self/node_id").asText();
        JsonNode candidates = ManagerCluster.api(b).query(NS, keys(0, 2 * BLOCKS)).json().get("candidates");
        for (int i = 0; i < 2 * BLOCKS; i++) {
            List<String> owners = new ArrayList<>();
            candidates.get(i).get("replicas").forEach(r -> owners.add(r.at("/owner/node_id").asText()));
            assertThat(owners).as("key " + i + ": B's index lists C's kept replica").contains(cNode);
        }
    }
}
