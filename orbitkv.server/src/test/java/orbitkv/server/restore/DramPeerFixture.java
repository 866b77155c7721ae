package orbitkv.server.restore;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import orbitkv.index.Coverage;
import orbitkv.index.Replica;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.RouteSelection;
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.ResidencySequence;

/**
 * A Manager with DRAM tiers only, a {@link FakeEngine} granting every block at {@code blockBytes} and completing every
 * READ at once, and the default route selection: restores of keys the index lists at the engine's source (peer routes)
 * or nowhere (local residences). {@link #close} checks that no restore memory is still held.
 */
final class DramPeerFixture implements AutoCloseable {
    static final Namespace NS = Namespace.utf8("ns");

    final ResidencySequence sequence = new ResidencySequence();
    final LocalTiers tiers;
    final FakeEngine engine = new FakeEngine();
    final RouteSelection routes = RouteSelection.create(RoutePolicy.defaults());
    private final long blockBytes;

    DramPeerFixture(Path dir, long dramBytes, long blockBytes) throws Exception {
        this.tiers = new LocalTiers(DramTier.open(dir, dramBytes, 64, sequence), null, sequence, new CopyOutBudget(1 << 20));
        this.blockBytes = blockBytes;
        engine.grantEveryBlock(blockBytes);
    }

    static StateKey key(int i) {
        return new StateKey(NS, new byte[] {(byte) i});
    }

    /** A restore of {@code keys}: listed at the engine's source when {@code peer}, else by no replica. */
    Restoration restoration(List<StateKey> keys, boolean peer, boolean storeLocal) {
        List<List<Replica>> replicas = new ArrayList<>();
        for (int k = 0; k < keys.size(); k++) {
            replicas.add(peer ? List.of(new Replica(FakeEngine.SOURCE, Medium.DRAM, 7, blockBytes, false)) : List.of());
        }
        IndexEvidence evidence = new IndexEvidence(Coverage.CompleteAtWatermarks, 1, replicas,
                Collections.nCopies(keys.size(), false));
        RestoreRequest req = new RestoreRequest(NS, keys, 30_000, Optional.empty(), false, storeLocal);
        return new Restoration(tiers, evidence, Optional.of(engine.transfer(1 << 20, 4, true)), routes, 1 << 20,
                UnpooledByteBufAllocator.DEFAULT, req, System.nanoTime() + TimeUnit.SECONDS.toNanos(30));
    }

    @Override
    public void close() throws Exception {
        assertThat(tiers.copyOut().heldBytes()).as("restore memory held after the test").isZero();
        tiers.close();
        routes.close();
    }
}
