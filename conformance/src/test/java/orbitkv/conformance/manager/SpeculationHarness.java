package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import orbitkv.conformance.etcd.EtcdFixture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 40 item 3 (ROUTE-12, ROUTE-13): one seeded demand trace replayed on three real Managers (sources A and B, the
 * requester C; real etcd, loopback) under three policies, each in a namespace of its own with identical keys, sizes
 * and source placement, so every policy starts from the same cold state: (a) retention and prefetch off, (b)
 * retention on ({@code store_local} on every restore), (c) both on (before each restore's think time, the engine
 * declares the next request of the trace with {@code POST /cache/prefetch}). The trace: {@value #CHAINS} chains of
 * {@value #CHAIN_BLOCKS} blocks of {@value #BLOCK_BYTES} bytes, half on A and half on B; {@value #REQUESTS} restores of
 * a chain prefix (chain Zipf-skewed with exponent 1.1, prefix length 2..8), a {@value #THINK_MS} ms think time between
 * restores. C's DRAM ({@value #REQUESTER_DRAM}) holds about half the working set, so retention must choose. Printed per
 * policy: restore latency p50/p99 (client round trip), bytes moved (the payload bytes of C's READs, all over TCP, prefetch included),
 * hit rate (restored blocks served from C's own tiers), kept, prefetched, used and wasted blocks, and the load average.
 * Every restore is checked complete and byte-exact. A harness, not a test (lane {@code qualification}):
 *
 * <pre>
 * flock /tmp/orbitkv-gate.lock mvn -o -B -ntp -pl conformance -am verify -Dtest=SpeculationHarness \
 *     -Dsurefire.failIfNoSpecifiedTests=false -Dorbitkv.test.groups=qualification [-Dbench.seed=40]
 * </pre>
 */
@Tag("qualification")
@Timeout(value = 20, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SpeculationHarness {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final long SEED = Long.getLong("bench.seed", 40);
    private static final int CHAINS = 16;
    private static final int CHAIN_BLOCKS = 8;
    private static final int BLOCK_BYTES = 128 << 10;
    private static final int REQUESTS = Integer.getInteger("bench.requests", 200);
    private static final int WARMUP = 60;
    private static final long THINK_MS = 20;
    private static final String REQUESTER_DRAM = "8MiB";
    private static final Pattern RUN = Pattern.compile("(local-dram|local-ssd|peer-dram|peer-ssd)(?:@[^\\[]*)?\\[(\\d+),(\\d+)\\)");

    private enum Policy {
        OFF, RETENTION, RETENTION_AND_PREFETCH
    }

    private ManagerCluster cluster;
    private ManagerProcess a;
    private ManagerProcess b;
    private ManagerProcess c;

    @BeforeAll
    void start() throws Exception {
        cluster = ManagerCluster.format(ETCD, "spec");
        a = cluster.launch("a", dir -> new ArrayList<>(List.of("--dram", "96MiB", "--block-bytes-max", "1MiB")));
        b = cluster.launch("b", dir -> new ArrayList<>(List.of("--dram", "96MiB", "--block-bytes-max", "1MiB")));
        // every READ of C over TCP (as between hosts), restores and prefetch alike
        c = cluster.launch("c", dir -> new ArrayList<>(List.of("--dram", REQUESTER_DRAM, "--block-bytes-max", "1MiB",
                "--transfer-backend", "tcp")));
        cluster.awaitMembers();
        for (String ns : List.of("warm", "p-off", "p-retention", "p-both")) {
            for (int chain = 0; chain < CHAINS; chain++) {
                Map<String, byte[]> blocks = new LinkedHashMap<>();
                for (int i = 0; i < CHAIN_BLOCKS; i++) {
                    blocks.put(key(chain, i), ManagerApi.payload(chain, i, BLOCK_BYTES));
                }
                ManagerApi.Reply r = ManagerCluster.api(chain % 2 == 0 ? a : b).save(ns, blocks);
                assertThat(r.status()).as(r.text()).isEqualTo(200);
            }
        }
        ManagerCluster.published(c, 10_000, a, b);
    }

    @AfterAll
    void stop() throws IOException {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static String key(int chain, int block) {
        return String.format("%032x%032x", 0x5700 + chain, block);
    }

    /** The seeded trace: each request a chain and a prefix length (the same for every policy). */
    private static int[][] trace(long seed, int n) {
        SplittableRandom r = new SplittableRandom(seed);
        double[] cdf = new double[CHAINS];
        double sum = 0;
        for (int i = 0; i < CHAINS; i++) {
            sum += 1 / Math.pow(i + 1, 1.1);
            cdf[i] = sum;
        }
        int[][] out = new int[n][];
        for (int q = 0; q < n; q++) {
            double u = r.nextDouble() * sum;
            int chain = 0;
            while (cdf[chain] < u) {
                chain++;
            }
            out[q] = new int[] {chain, 2 + r.nextInt(CHAIN_BLOCKS - 1)};
        }
        return out;
    }

    private static List<String> keys(int[] req) {
        List<String> k = new ArrayList<>();
        for (int i = 0; i < req[1]; i++) {
            k.add(key(req[0], i));
        }
        return k;
    }

    private static String json(List<String> keys) {
        return keys.stream().map(k -> "\"" + k + "\"").toList().toString();
    }

    /** The payload bytes C's READs moved so far (every backend and route class, restores and prefetch alike). */
    private long bytesServed() {
        JsonNode routes = ManagerCluster.api(c).status().at("/transfer/requester/routes");
        assertThat(routes.isArray()).as("transfer.requester.routes in C's status").isTrue();
        long sum = 0;
        for (JsonNode r : routes) {
            sum += r.get("bytes").asLong();
        }
        return sum;
    }

    private record Figures(Policy policy, double p50Ms, double p99Ms, long bytesMoved, long blocks, long localBlocks,
                           JsonNode speculation) {}

    private Figures run(Policy policy, String ns, int[][] trace) {
        ManagerApi api = ManagerCluster.api(c);
        long servedBefore = bytesServed();
        long[] latencies = new long[trace.length];
        long blocks = 0;
        long local = 0;
        for (int q = 0; q < trace.length; q++) {
            List<String> keys = keys(trace[q]);
            String body = "{\"namespace\": \"" + ns + "\", \"keys\": " + json(keys) + ", \"deadline_ms\": 10000"
                    + (policy == Policy.OFF ? "" : ", \"store_local\": true") + "}";
            long t0 = System.nanoTime();
            ManagerApi.Reply r = api.postJson("/cache/restore", body);
            latencies[q] = System.nanoTime() - t0;
            assertThat(r.status()).as(r.text()).isEqualTo(200);
            Map<String, byte[]> got = ManagerApi.unframe(r.body());
            assertThat(got.keySet()).as(r.header("X-OrbitKV-Route")).containsExactlyElementsOf(keys);
            for (int i = 0; i < keys.size(); i++) {
                assertThat(got.get(keys.get(i))).isEqualTo(ManagerApi.payload(trace[q][0], i, BLOCK_BYTES));
            }
            blocks += keys.size();
            local += localBlocks(r.header("X-OrbitKV-Route"));
            if (policy == Policy.RETENTION_AND_PREFETCH && q + 1 < trace.length) {
                ManagerApi.Reply p = api.postJson("/cache/prefetch", "{\"namespace\": \"" + ns + "\", \"keys\": "
                        + json(keys(trace[q + 1])) + ", \"deadline_ms\": 5000}");
                assertThat(p.status()).as(p.text()).isEqualTo(200);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(THINK_MS)); // the engine's think time (workload pacing)
        }
        JsonNode speculation = api.status().get("speculation");
        long moved = bytesServed() - servedBefore;
        for (int chain = 0; chain < CHAINS; chain++) { // the next policy starts from the same cold requester
            List<String> k = keys(new int[] {chain, CHAIN_BLOCKS});
            assertThat(api.evict(ns, k, "ALL").status()).isEqualTo(200);
        }
        Arrays.sort(latencies);
        return new Figures(policy, latencies[latencies.length / 2] / 1e6,
                latencies[(int) Math.min(latencies.length - 1, Math.ceil(latencies.length * 0.99) - 1)] / 1e6,
                moved, blocks, local, speculation);
    }

    private static long localBlocks(String route) {
        long n = 0;
        Matcher m = RUN.matcher(route);
        while (m.find()) {
            if (m.group(1).startsWith("local")) {
                n += Long.parseLong(m.group(3)) - Long.parseLong(m.group(2));
            }
        }
        return n;
    }

    @Test
    void replay() throws IOException {
        run(Policy.OFF, "warm", trace(SEED + 1, WARMUP)); // JIT warm-up of every path, not reported
        int[][] trace = trace(SEED, REQUESTS);
        List<Figures> all = new ArrayList<>();
        all.add(run(Policy.OFF, "p-off", trace));
        JsonNode before = ManagerCluster.api(c).status().get("speculation");
        all.add(run(Policy.RETENTION, "p-retention", trace));
        all.add(run(Policy.RETENTION_AND_PREFETCH, "p-both", trace));
        String load = Files.readString(Path.of("/proc/loadavg")).strip();
        System.out.println("SpeculationHarness seed=" + SEED + " requests=" + REQUESTS + " chains=" + CHAINS + "x"
                + CHAIN_BLOCKS + " block=" + BLOCK_BYTES + " requester-dram=" + REQUESTER_DRAM + " think=" + THINK_MS
                + "ms loadavg=" + load);
        System.out.println("| policy | restore p50 ms | restore p99 ms | bytes moved MiB | hit rate | speculation (cumulative) |");
        System.out.println("|---|---|---|---|---|---|");
        for (Figures f : all) {
            System.out.println(String.format(Locale.ROOT, "| %s | %.2f | %.2f | %.1f | %.3f | kept=%s prefetched=%d used=%d wasted=%d refusals=%s prefetch-refusals=%s |",
                    f.policy().name().toLowerCase(Locale.ROOT), f.p50Ms(), f.p99Ms(), f.bytesMoved() / 1048576.0,
                    f.localBlocks() / (double) f.blocks(), f.speculation().get("kept_blocks"),
                    f.speculation().get("prefetched_blocks").asLong(), f.speculation().get("used_blocks").asLong(),
                    f.speculation().get("wasted_blocks").asLong(), f.speculation().get("retention_refusals"),
                    f.speculation().get("prefetch_refusals")));
        }
        System.out.println("requester speculation before the retention run: " + before);
    }
}
