package orbitkv.conformance.baseline;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.testing.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The baseline end to end on real etcd: background publishers of two owners under seeded random churn, and the
 * observer's Watch-built view compared with each source's resident map (an independent oracle: the test's own
 * record of what it put and deleted), for every publisher variant of the ablation.
 */
@Tag("gate")
class BlockObserverTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();
    static Client client;
    static final long SEED = Long.getLong("orbitkv.baseline.seed", 20261130L);

    @BeforeAll
    static void connect() {
        client = Client.builder().endpoints(ETCD.endpoints().urls()).build();
    }

    @AfterAll
    static void disconnect() {
        client.close();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"frozen", "coalescing-0", "coalescing-2", "coalescing-5"})
    @DisplayName("PUB-1 PUB-2 PUB-5 PERF-5 the observer's Watch view equals every owner's resident map; installed = head exactly")
    void watchViewEqualsResidentMaps(String variant) throws Exception {
        System.out.println("BlockObserverTest seed " + SEED + " (replay: -Dorbitkv.baseline.seed=" + SEED + ")");
        PublisherConfig config = variant.equals("frozen") ? PublisherConfig.frozen()
                : PublisherConfig.coalescing(Long.parseLong(variant.substring("coalescing-".length()))).withOpsPerTxnMax(16);
        BaselineKeys keys = new BaselineKeys("o-" + UUID.randomUUID().toString().substring(0, 8));
        Random rnd = new Random(SEED);
        try (BlockObserver observer = BlockObserver.start(keys, client, 5_000)) {
            String[] owners = {"a", "b"};
            SignalledSource[] sources = new SignalledSource[owners.length];
            EtcdBlockPublisher[] publishers = new EtcdBlockPublisher[owners.length];
            @SuppressWarnings("unchecked")
            Map<String, String>[] expected = new Map[owners.length];
            for (int o = 0; o < owners.length; o++) {
                sources[o] = SignalledSource.create(InventoryConfig.defaults());
                publishers[o] = EtcdBlockPublisher.open(owners[o], sources[o], keys, config, new JetcdTxnPort(client, 2_000, false));
                publishers[o].start();
                expected[o] = new TreeMap<>();
            }
            try {
                Namespace ns = Namespace.utf8("ns-1");
                for (int i = 0; i < 600; i++) {
                    int o = rnd.nextInt(owners.length);
                    StateKey k = new StateKey(ns, new byte[] {(byte) rnd.nextInt(40)});
                    Medium m = rnd.nextBoolean() ? Medium.DRAM : Medium.SSD;
                    String id = HexFormat.of().formatHex(ns.bytes()) + "/" + k.keyHex() + "/" + m;
                    if (rnd.nextInt(4) == 0) {
                        if (sources[o].delete(k, m) instanceof MutationResult.Recorded) {
                            assertThat(expected[o].remove(id)).isNotNull();
                        }
                    } else {
                        long size = 1 + rnd.nextInt(1000);
                        MutationResult.Recorded r = (MutationResult.Recorded) sources[o].put(k, m, size);
                        expected[o].put(id, r.sequence() + "," + size);
                    }
                    if (i % 50 == 0) {
                        Thread.sleep(1); // let windows close between bursts (the workload's cadence, not a synchronization)
                    }
                }
                for (int o = 0; o < owners.length; o++) {
                    String owner = owners[o];
                    long head = sources[o].headSequence();
                    EtcdBlockPublisher p = publishers[o];
                    Await.until("observer installed " + owner + " at head " + head, Duration.ofSeconds(30), () -> {
                        assertThat(p.failure()).isEmpty();
                        assertThat(observer.failure()).isEmpty();
                        return observer.installed(owner).sequence() == head;
                    });
                    Map<String, String> seen = new TreeMap<>();
                    observer.rows(owner).forEach((k, v) -> seen.put(k, v.sequence() + "," + v.sizeBytes()));
                    assertThat(seen).as("observer view of %s = the owner's resident map", owner).isEqualTo(expected[o]);
                    assertThat(observer.covered(owner)).isEqualTo(head);
                }
                if (config.variant() == PublisherConfig.Variant.COALESCING && config.windowMs() > 0) {
                    long txns = publishers[0].transactions.get() + publishers[1].transactions.get();
                    long mutations = publishers[0].originalMutations.get() + publishers[1].originalMutations.get();
                    assertThat(txns).as("a coalescing window publishes fewer transactions than mutations").isLessThan(mutations);
                }
            } finally {
                for (EtcdBlockPublisher p : publishers) {
                    p.close();
                }
            }
        }
    }
}
