package orbitkv.server.restore;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.PrefixStop;
import orbitkv.recovery.Route;
import orbitkv.recovery.RouteBlock;
import orbitkv.recovery.RouteSource;
import orbitkv.recovery.TransferPorts;
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;
import orbitkv.server.tier.SaveOutcome;
import orbitkv.server.tier.SsdTier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local route port against small in-process tiers (no HTTP, no Netty channel): the exact generation is pinned
 * and verified before a record is ready (INV-2), a DRAM record sends the payload from the arena while it holds the
 * pin, an SSD record holds a copy, a stale or evicted generation is refused by key and changes nothing.
 */
@Tag("unit")
@Timeout(60)
class LocalRoutePortTest {
    private static final Namespace NS = Namespace.utf8("ns");

    @TempDir
    Path dir;
    private LocalTiers tiers;
    private final RestoreNotes notes = new RestoreNotes();
    private RestorePorts ports;

    @BeforeEach
    void open() throws Exception {
        ResidencySequence sequence = new ResidencySequence();
        tiers = new LocalTiers(DramTier.open(dir, 256 * 1024, 64, sequence),
                SsdTier.open(dir.resolve("ssd"), 1 << 20, 64, 64, 1 << 20, sequence), sequence,
                new CopyOutBudget(1 << 20));
        ports = new RestorePorts(tiers, Optional.empty(), UnpooledByteBufAllocator.DEFAULT, 1 << 20, notes,
                new LocalRoutePort(tiers, notes), Optional.empty(), RestoreStages.OFF);
    }

    @AfterEach
    void close() throws Exception {
        assertThat(tiers.copyOut().heldBytes()).as("every record byte returned to the budget").isZero();
        tiers.close();
    }

    private static byte[] payload(int seed, int size) {
        byte[] b = new byte[size];
        Arrays.fill(b, (byte) seed);
        b[0] = (byte) (seed + 1);
        return b;
    }

    private RouteBlock saved(int key, byte[] payload) throws Exception {
        StateKey k = new StateKey(NS, new byte[] {(byte) key});
        SaveOutcome.Stored s = (SaveOutcome.Stored) tiers.save(k, payload);
        assertThat(tiers.awaitSubmittedSaves(30_000)).isTrue();
        return new RouteBlock(k, s.sequence(), payload.length, false);
    }

    private TransferPorts.GrantOutcome<RestoreRecords> authorize(Route route, RestoreRecords[] out) {
        var held = (TransferPorts.CreditOutcome.Held<RestoreRecords>) ports.credits(route);
        out[0] = held.credit().destination();
        return ports.authorize(route, 0);
    }

    @Test
    @DisplayName("INV-2 a local DRAM and a local SSD route: pinned at the exact generation, verified, each record header + payload")
    void dramAndSsd() throws Exception {
        byte[] a = payload(3, 3000);
        byte[] b = payload(9, 1200);
        List<RouteBlock> saved = List.of(saved(1, a), saved(2, b));
        for (Medium medium : Medium.values()) {
            List<RouteBlock> blocks = saved.stream().map(s -> at(s, medium)).toList();
            Route route = new Route(new RouteSource.Local(medium), 0, blocks);
            RestoreRecords[] dst = new RestoreRecords[1];
            var granted = (TransferPorts.GrantOutcome.Granted<RestoreRecords>) authorize(route, dst);
            var sub = granted.grant().read(dst[0]);
            assertThat(sub.ready().join()).isInstanceOf(TransferPorts.ReadyOutcome.Ready.class);
            assertThat(payloadOf(dst[0].records.get(0))).as(medium.name()).isEqualTo(a);
            assertThat(payloadOf(dst[0].records.get(1))).as(medium.name()).isEqualTo(b);
            dst[0].deliver();
            dst[0].release();
            new RestoreResult.DeliveredRoute(dst[0].records, dst[0].bytes, List.of()).release(tiers.copyOut());
        }
    }

    /** The block's residence in {@code medium} (each medium has its own sequence). */
    private RouteBlock at(RouteBlock block, Medium medium) {
        var r = tiers.residences(block.key()).stream().filter(x -> x.medium() == medium).findFirst().orElseThrow();
        return new RouteBlock(block.key(), r.sequence(), r.sizeBytes(), false);
    }

    private static byte[] payloadOf(ByteBuf record) {
        int keyLength = record.getUnsignedShort(0);
        int length = record.getInt(2 + keyLength);
        assertThat(record.readableBytes()).isEqualTo(RecordHeader.BYTES + keyLength + length);
        return ByteBufUtil.getBytes(record, RecordHeader.BYTES + keyLength, length);
    }

    @Test
    @DisplayName("INV-3 a generation that moved on is refused as stale for that key; nothing is served, nothing held")
    void staleGeneration() throws Exception {
        RouteBlock first = saved(1, payload(1, 500));
        RouteBlock old = saved(2, payload(2, 500));
        saved(2, payload(5, 500)); // a newer generation of key 2
        Route route = new Route(new RouteSource.Local(Medium.DRAM), 0, List.of(first, old));
        RestoreRecords[] dst = new RestoreRecords[1];
        var refused = (TransferPorts.GrantOutcome.Refused<RestoreRecords>) authorize(route, dst);
        assertThat(refused.reason()).isEqualTo(AdmissionRefusal.STALE_GENERATION);
        assertThat(refused.refusedKeys()).containsExactly(old.key());
        assertThat(notes.stop(PrefixStop.REPLANS_EXHAUSTED)).endsWith("refusal=stale-generation");
        dst[0].release();
    }

    @Test
    @DisplayName("an evicted block is refused as not resident")
    void evicted() throws Exception {
        RouteBlock block = saved(1, payload(1, 500));
        tiers.evict(block.key(), LocalTiers.EvictTarget.DRAM);
        Route route = new Route(new RouteSource.Local(Medium.DRAM), 0, List.of(block));
        RestoreRecords[] dst = new RestoreRecords[1];
        var refused = (TransferPorts.GrantOutcome.Refused<RestoreRecords>) authorize(route, dst);
        assertThat(refused.reason()).isEqualTo(AdmissionRefusal.NOT_RESIDENT);
        dst[0].release();
    }
}
