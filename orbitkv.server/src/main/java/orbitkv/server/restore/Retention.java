package orbitkv.server.restore;

import java.nio.ByteBuffer;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.SaveBatch;
import orbitkv.server.tier.SaveOutcome;
import orbitkv.server.tier.TierUsage;
import orbitkv.server.tier.TierWriteFailed;

/**
 * Retention of fetched blocks (ROUTE-12, seed S7): a block READ from a peer and verified (INV-2: the engine checked
 * its CRC32C before the READ completed) is kept in the local DRAM tier only when asked ({@code store_local}, or a
 * declared prefetch) and only when
 *
 * <ol>
 *   <li>the <b>reuse-benefit estimate</b> says so, at one accounting horizon: the next declared reuse of the block.
 *       Within it, keeping saves one fetch of {@code S} bytes (the benefit, {@code S}); it costs the copy into DRAM
 *       ({@code S × --retain-copy-cost-percent / 100}, the preparation) and the bytes its reservation would evict
 *       ({@code E = max(0, extent(S) - free DRAM bytes)}, each assumed as likely to be reused within the same horizon
 *       as the kept block, so each evicted byte costs one fetch again). Kept iff {@code S > S·c + E}: a block that
 *       fits into free space is kept, one that would push out as much as it brings is not
 *       ({@code no-reuse-benefit}). The estimate reads the free bytes once; fragmentation can make the reservation
 *       evict a little more than {@code E};</li>
 *   <li>a <b>real storage reservation</b> is taken before any byte is copied: the DRAM extent of a save
 *       ({@link SaveBatch#reserve}); a refusal is named ({@code no-evictable-space}, {@code block-exceeds-tier},
 *       {@code closed}, {@code backing-store-full}) and the restore itself is unaffected.</li>
 * </ol>
 *
 * A kept block is committed like a save: a residence with a new generation and a journal put, so peers see the new
 * replica through the inventory stream. Counted: kept blocks and bytes by cause, refusals by reason.
 */
public final class Retention {
    /** Why a block was kept. */
    public enum Cause {
        STORE_LOCAL,
        PREFETCH;

        public String traceName() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** Why a block was not kept (a closed set: metric labels). */
    public enum Refusal {
        ALREADY_LOCAL,
        NO_REUSE_BENEFIT,
        NO_EVICTABLE_SPACE,
        BLOCK_EXCEEDS_TIER,
        CLOSED,
        BACKING_STORE_FULL,
        OTHER;

        public String traceName() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** A point-in-time copy of the counters. */
    public record Figures(Map<Cause, Long> keptBlocks, Map<Cause, Long> keptBytes, Map<Refusal, Long> refusals) {
        public Figures {
            keptBlocks = Map.copyOf(keptBlocks);
            keptBytes = Map.copyOf(keptBytes);
            refusals = Map.copyOf(refusals);
        }
    }

    private static final long ALIGNMENT_BYTES = 64;

    private final LocalTiers tiers;
    private final int copyCostPercent;
    private final Map<Cause, LongAdder> keptBlocks = new EnumMap<>(Cause.class);
    private final Map<Cause, LongAdder> keptBytes = new EnumMap<>(Cause.class);
    private final Map<Refusal, LongAdder> refusals = new EnumMap<>(Refusal.class);

    /** @param copyCostPercent {@code --retain-copy-cost-percent}, 0..100 */
    public Retention(LocalTiers tiers, int copyCostPercent) {
        if (copyCostPercent < 0 || copyCostPercent > 100) {
            throw new IllegalArgumentException("copyCostPercent must be 0..100, got " + copyCostPercent);
        }
        this.tiers = tiers;
        this.copyCostPercent = copyCostPercent;
        for (Cause c : Cause.values()) {
            keptBlocks.put(c, new LongAdder());
            keptBytes.put(c, new LongAdder());
        }
        for (Refusal r : Refusal.values()) {
            refusals.put(r, new LongAdder());
        }
    }

    /**
     * The reuse-benefit estimate (see the class comment): whether one reuse of {@code sizeBytes} saves more than the
     * copy ({@code copyCostPercent} of it) plus what a reservation would evict with {@code freeBytes} free.
     */
    static boolean worthKeeping(long sizeBytes, long freeBytes, int copyCostPercent) {
        long extent = Math.max(ALIGNMENT_BYTES, (sizeBytes + ALIGNMENT_BYTES - 1) / ALIGNMENT_BYTES * ALIGNMENT_BYTES);
        long evicted = Math.max(0, extent - Math.max(0, freeBytes));
        double cost = sizeBytes * (copyCostPercent / 100.0) + evicted;
        return sizeBytes > cost;
    }

    /** Whether a block of {@code sizeBytes} would pass the estimate now (prefetch asks before it fetches). */
    boolean wouldKeep(long sizeBytes) {
        TierUsage dram = tiers.dram().usage();
        return worthKeeping(sizeBytes, dram.capacityBytes() - dram.allocatedBytes(), copyCostPercent);
    }

    /**
     * Keeps the verified payload {@code payload} (its remaining bytes, not consumed) of {@code key} in DRAM, or says
     * why not. Nothing is stored on a refusal.
     *
     * @return null when kept, else the refusal (counted)
     */
    public Refusal keep(StateKey key, ByteBuffer payload, Cause cause) {
        long size = payload.remaining();
        Refusal refusal = tryKeep(key, payload.duplicate(), size);
        if (refusal == null) {
            keptBlocks.get(cause).increment();
            keptBytes.get(cause).add(size);
        } else {
            refusals.get(refusal).increment();
        }
        return refusal;
    }

    private Refusal tryKeep(StateKey key, ByteBuffer bytes, long size) {
        if (tiers.residences(key).stream().anyMatch(r -> r.medium() == Medium.DRAM)) {
            return Refusal.ALREADY_LOCAL;
        }
        TierUsage dram = tiers.dram().usage();
        if (!worthKeeping(size, dram.capacityBytes() - dram.allocatedBytes(), copyCostPercent)) {
            return Refusal.NO_REUSE_BENEFIT;
        }
        try (SaveBatch batch = tiers.beginSave()) {
            SaveOutcome.Refused refused = batch.reserve(key, size); // the reservation, before any byte is copied
            if (refused != null) {
                return refusal(refused);
            }
            try {
                batch.write(bytes);
            } catch (TierWriteFailed failed) {
                return refusal(failed.refusal());
            } catch (IllegalStateException closed) {
                return Refusal.CLOSED;
            }
            return switch (batch.commit()) { // a residence and a journal put, as a save (peers see the replica)
                case SaveBatch.Outcome.Stored s -> null;
                case SaveBatch.Outcome.Refused r -> refusal(r.refusal());
            };
        }
    }

    private static Refusal refusal(SaveOutcome.Refused r) {
        return switch (r.reason()) {
            case NO_EVICTABLE_SPACE -> Refusal.NO_EVICTABLE_SPACE;
            case BLOCK_EXCEEDS_TIER -> Refusal.BLOCK_EXCEEDS_TIER;
            case CLOSED -> Refusal.CLOSED;
            case BACKING_STORE_FULL -> Refusal.BACKING_STORE_FULL;
            default -> Refusal.OTHER;
        };
    }

    public Figures figures() {
        Map<Cause, Long> blocks = new EnumMap<>(Cause.class);
        Map<Cause, Long> bytes = new EnumMap<>(Cause.class);
        Map<Refusal, Long> refused = new EnumMap<>(Refusal.class);
        keptBlocks.forEach((c, n) -> blocks.put(c, n.sum()));
        keptBytes.forEach((c, n) -> bytes.put(c, n.sum()));
        refusals.forEach((r, n) -> refused.put(r, n.sum()));
        return new Figures(blocks, bytes, refused);
    }
}
