package orbitkv.server.tier;

import java.util.Objects;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.StateKey;

/**
 * Connects the tiers to the source inventory (DESIGN §7: "each insert/evict is a journal record"): every
 * residency change of a tier becomes a put or delete of the {@link InventorySource}, which assigns the
 * residency sequence under the inventory lock together with the resident-map change and the journal
 * append (INV-3, PERF-1). The sequence returned here is the one the save and evict answers carry.
 *
 * <p>The source's mutations are in-memory and never wait on readers, sessions, etcd or peers (BND-5), so
 * calling them under a tier lock keeps saves local (INV-1).
 */
public final class SourceResidency implements ResidencyListener {
    /** The source of the current incarnation; replaced only by a heal ({@link LocalTiers#republish}). */
    private volatile InventorySource source;

    public SourceResidency(InventorySource source) {
        this.source = Objects.requireNonNull(source, "source");
    }

    /** The source every residency change reports to now. */
    public InventorySource source() {
        return source;
    }

    /**
     * Reports to {@code next} from now on: called by {@link LocalTiers#republish} with save commits held off,
     * which then re-announces every residence to it (a healed Manager's new journal lineage, INV-7).
     */
    public void switchTo(InventorySource next) {
        this.source = Objects.requireNonNull(next, "next source");
    }

    @Override
    public long onResident(StateKey key, Medium medium, long sizeBytes) {
        return sequenceOf(source.put(key, medium, sizeBytes));
    }

    /** A delete of a residence the source does not hold consumes no sequence (PUB-8: only this medium). */
    @Override
    public long onEvicted(StateKey key, Medium medium) {
        return sequenceOf(source.delete(key, medium));
    }

    @Override
    public long headSequence() {
        return source.headSequence();
    }

    @Override
    public java.util.Optional<InventorySource> inventory() {
        return java.util.Optional.of(source);
    }

    private static long sequenceOf(MutationResult result) {
        return switch (result) {
            case MutationResult.Recorded r -> r.sequence();
            case MutationResult.NotResident n -> NO_SEQUENCE;
        };
    }
}
