package orbitkv.server.runtime;

import java.io.IOException;
import orbitkv.inventory.InventorySource;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.SourceResidency;
import orbitkv.server.tier.SsdTier;

/**
 * What every Manager has, standalone or distributed: the source inventory of this process and the DRAM
 * (and optional SSD) tiers whose every residency change is a put or delete of that source (DESIGN §4,
 * §7; INV-1, INV-3). A new process is a new source: the journal lineage starts at sequence 1 (INV-7).
 *
 * @param source the source inventory (resident map and journal)
 * @param tiers the payload tiers, reporting to {@code source}
 */
record LocalCache(InventorySource source, LocalTiers tiers) implements AutoCloseable {
    static LocalCache open(ManagerConfig config) throws IOException {
        InventorySource source = InventorySource.create(config.inventoryConfig());
        SourceResidency residency = new SourceResidency(source);
        ManagerConfig.Tiers t = config.tiers();
        DramTier dram = DramTier.open(t.dramDir(), t.dramBytes(), t.dramPinsMax(), residency);
        SsdTier ssd = null;
        try {
            if (t.hasSsd()) {
                ssd = SsdTier.open(t.ssdDir(), t.ssdBytes(), t.ssdPinsMax(), t.ssdQueueWritesMax(), t.ssdQueueBytesMax(), residency);
            }
            return new LocalCache(source, new LocalTiers(dram, ssd, residency));
        } catch (IOException | RuntimeException e) {
            dram.close();
            throw e;
        }
    }

    /** Closes the tiers (the DRAM arena file and SSD block files are deleted). */
    @Override
    public void close() throws IOException {
        tiers.close();
    }
}
