package orbitkv.server.runtime;

import java.io.IOException;
import orbitkv.inventory.InventorySource;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.tier.RestoreArena;
import orbitkv.server.tier.DramTier;
import orbitkv.server.tier.LocalResourceRefused;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.SourceResidency;
import orbitkv.server.tier.SsdTier;
import orbitkv.server.tier.TierInstance;
import orbitkv.server.tier.TierSpace;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every Manager has, standalone or distributed: the source inventory of this process and the DRAM
 * (and optional SSD) tiers whose every residency change is a put or delete of that source (DESIGN §4,
 * §7; INV-1, INV-3). A new process is a new source: the journal lineage starts at sequence 1 (INV-7).
 *
 * <p>Opening takes the SSD directory's exclusive lock first and reclaims stale DRAM arenas (issue 20 item
 * 1), before a distributed Manager touches etcd: a refused start leaves no registration behind.
 *
 * <p>A healed Manager (issue 17 item 5) is a new incarnation of the same process: {@link #startNewLineage}
 * gives it a new source (a new journal lineage from sequence 1) and re-announces every cached residence to
 * it; the bytes stay in the tiers.
 *
 * @param residency the listener connecting the tiers to the current source inventory
 * @param tiers the payload tiers, reporting to {@code residency}
 * @param instance the identity of this process's tier files (SSD lock, arena and block file names)
 */
record LocalCache(SourceResidency residency, LocalTiers tiers, TierInstance instance) implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LocalCache.class);

    static LocalCache open(ManagerConfig config) throws IOException {
        java.util.Optional<String> memory = MemoryBudget.refusal(config);
        if (memory.isPresent()) { // before anything is created, and before any etcd side effect
            throw new LocalResourceRefused(memory.get());
        }
        ManagerConfig.Tiers t = config.tiers();
        // issue 33: a tmpfs too small for both arenas would fail saves later (a SIGBUS under a mapped write)
        java.util.Optional<String> space = TierSpace.dramRefusal(t.dramDir(), t.dramBytes(), t.restoreBytesInFlightMax(),
                TierSpace::usableBytes);
        if (space.isPresent()) {
            throw new LocalResourceRefused(space.get());
        }
        if (t.hasSsd()) {
            TierSpace.ssdShortfall(t.ssdDir(), t.ssdBytes(), TierSpace::usableBytes).ifPresent(LOG::warn);
        }
        InventorySource source = InventorySource.create(config.inventoryConfig());
        SourceResidency residency = new SourceResidency(source);
        TierInstance instance = TierInstance.random(config.nodeId().value());
        SsdTier ssd = null;
        if (t.hasSsd()) { // first: a directory held by another Manager refuses the start before anything is created
            ssd = SsdTier.open(t.ssdDir(), instance, t.ssdBytes(), t.ssdPinsMax(), t.ssdPinnedBytesMax(),
                    t.ssdQueueWritesMax(), t.ssdQueueBytesMax(), residency);
        }
        try {
            DramTier dram = DramTier.open(t.dramDir(), instance, t.dramBytes(), t.dramPinsMax(), t.dramPinnedBytesMax(),
                    residency);
            LOG.info("local tiers open as instance {}: DRAM arena {}{}", instance.fileTag(), dram.arenaFile(),
                    ssd == null ? "" : ", SSD directory " + t.ssdDir().toAbsolutePath() + " (locked)");
            RestoreArena restoreArena;
            try {
                restoreArena = RestoreArena.map(t.dramDir(), t.restoreBytesInFlightMax());
            } catch (IOException | RuntimeException e) {
                dram.close();
                throw e;
            }
            return new LocalCache(residency, new LocalTiers(dram, ssd, residency,
                    new CopyOutBudget(t.restoreBytesInFlightMax()), restoreArena,
                    orbitkv.server.admission.NodeAdmissionService.start(config.admission(), config.peerListen().host())
                            .orElse(null)), instance); // issue 39
        } catch (IOException | RuntimeException e) {
            if (ssd != null) {
                ssd.close();
            }
            throw e;
        }
    }

    /** The source inventory of the current incarnation (resident map and journal). */
    InventorySource source() {
        return residency.source();
    }

    /**
     * A new source lineage for a healed incarnation: a new, empty source with the same configuration; with
     * save commits held off, the tiers report to it from now on and every cached DRAM and SSD residence is
     * put into it under a fresh sequence (peers bootstrap it from scratch, INV-7).
     *
     * @return the new source and how many residences it received
     */
    Lineage startNewLineage() {
        InventorySource next = InventorySource.create(source().config());
        int republished = tiers.republish(() -> residency.switchTo(next));
        return new Lineage(next, republished);
    }

    /** A new source lineage and the residences re-announced into it. */
    record Lineage(InventorySource source, int republished) {}

    /**
     * Ties this process's tier instance to its registered incarnation (the tiers open before registration):
     * logged once and written into the SSD directory's lock file, where a refused second Manager reads it.
     */
    void recordIncarnation(String incarnation) {
        LOG.info("tier instance {} serves incarnation {}", instance.fileTag(), incarnation);
        try {
            tiers.recordIncarnation(incarnation);
        } catch (IOException e) {
            LOG.warn("could not record incarnation {} in the SSD lock file: {}", incarnation, e.toString());
        }
    }

    /** Closes the tiers (the DRAM arena file and SSD block files are deleted). */
    @Override
    public void close() throws IOException {
        tiers.close();
    }
}
