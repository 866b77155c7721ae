package orbitkv.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import orbitkv.server.incarnation.StandaloneMetadata;
import orbitkv.inventory.Scope;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.server.config.ListenAddress;
import orbitkv.server.net.NativeTransport;
import orbitkv.server.tier.CopyOutBudget;
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
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import orbitkv.server.api.BlockFraming;

/**
 * How often a save copies a payload (issue 24 item 5, docs/results/2026-12-02-save-ingest.md), counted by the DRAM tier's
 * {@code payloadBytesSavedInTotal} through the HTTP API of a standalone Manager over real tiers: each payload byte of
 * a save is copied exactly once in user space, from the HTTP receive buffer into its arena reservation (the CRC32C
 * is taken over that chunk as it is copied), and never copied out again by the save (no restore-side copy either).
 * A malformed save stores nothing and copies at most the bytes it received.
 */
@Tag("unit")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class SaveCopiesTest {
    private LocalTiers tiers;
    private HttpApiServer server;
    private RawHttp http;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        ResidencySequence sequence = new ResidencySequence();
        tiers = new LocalTiers(DramTier.open(dir, 1 << 20, 64, sequence),
                SsdTier.open(dir.resolve("ssd"), 1 << 20, 64, 64, 1 << 20, sequence), sequence,
                new CopyOutBudget(1 << 20));
        Incarnation self = Incarnation.random(new NodeId("n1"), new NodeEpoch(1));
        server = HttpApiServer.start(new ListenAddress("127.0.0.1", 0), NativeTransport.detect(), tiers,
                new StandaloneMetadata(null, self, Scope.all()), TestLimits.small());
        http = new RawHttp(server.boundAddress());
    }

    @AfterAll
    void stop() throws Exception {
        server.close();
        tiers.close();
    }

    private long savedIn() {
        return tiers.dram().counters().payloadBytesSavedInTotal();
    }

    private long copiedOut() {
        return tiers.dram().counters().payloadBytesCopiedTotal();
    }

    /** Blocks of seeded random sizes (16..4000 bytes: the 16-byte header, within TestLimits.small()'s 4096-byte block bound). */
    private static List<BlockFraming.Block> blocks(SplittableRandom random, int prefix, int count) {
        List<BlockFraming.Block> blocks = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            byte[] payload = HttpApiTest.payload(prefix, i, 16 + random.nextInt(3985));
            blocks.add(new BlockFraming.Block(new byte[] {(byte) 0xe0, (byte) prefix, (byte) i}, payload));
        }
        return blocks;
    }

    private static long payloadBytes(List<BlockFraming.Block> blocks) {
        return blocks.stream().mapToLong(b -> b.payload().length).sum();
    }

    @Test
    @DisplayName("a save copies each payload byte exactly once in user space (receive buffer -> arena), none out again")
    void oneCopyPerSavedByte() throws Exception {
        long seed = Long.getLong("orbitkv.seed", 20261202L);
        System.out.println("SaveCopiesTest.oneCopyPerSavedByte seed=" + seed + " (replay: -Dorbitkv.seed=" + seed + ")");
        SplittableRandom random = new SplittableRandom(seed);
        for (int round = 0; round < 8; round++) {
            List<BlockFraming.Block> blocks = blocks(random, round, 1 + random.nextInt(16));
            long in = savedIn();
            long out = copiedOut();
            long stored = tiers.dram().counters().storedTotal();
            RawHttp.Response r = http.post("/cache/save?namespace=ns", BlockFraming.CONTENT_TYPE, HttpApiTest.body(blocks));
            assertThat(r.status()).as("seed %d round %d: %s", seed, round, new String(r.body())).isEqualTo(200);
            assertThat(savedIn() - in).as("seed %d round %d: bytes copied into the arena", seed, round)
                    .isEqualTo(payloadBytes(blocks));
            assertThat(copiedOut() - out).as("seed %d round %d: bytes copied out by a save", seed, round).isZero();
            assertThat(tiers.dram().counters().storedTotal() - stored).isEqualTo(blocks.size());
        }
    }

    @Test
    @DisplayName("a save cut inside its last record stores nothing and copies no more than it received")
    void truncatedSaveStoresNothing() throws Exception {
        long seed = Long.getLong("orbitkv.seed", 20261203L);
        System.out.println("SaveCopiesTest.truncatedSaveStoresNothing seed=" + seed + " (replay: -Dorbitkv.seed=" + seed + ")");
        SplittableRandom random = new SplittableRandom(seed);
        List<BlockFraming.Block> blocks = blocks(random, 100, 4);
        blocks.set(3, new BlockFraming.Block(blocks.get(3).key(), HttpApiTest.payload(100, 3, 2000)));
        byte[] body = HttpApiTest.body(blocks);
        byte[] cut = Arrays.copyOf(body, body.length - 1 - random.nextInt(1000));
        long in = savedIn();
        long stored = tiers.dram().counters().storedTotal();
        RawHttp.Response r = http.post("/cache/save?namespace=ns", BlockFraming.CONTENT_TYPE, cut);
        assertThat(r.status()).as("seed %d: %s", seed, new String(r.body())).isEqualTo(400);
        assertThat(tiers.dram().counters().storedTotal()).isEqualTo(stored);
        assertThat(savedIn() - in).as("seed %d", seed).isLessThan(payloadBytes(blocks)).isLessThanOrEqualTo(cut.length);
    }
}
