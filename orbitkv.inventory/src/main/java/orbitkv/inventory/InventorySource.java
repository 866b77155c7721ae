package orbitkv.inventory;

import java.util.function.LongSupplier;
import orbitkv.membership.ProtocolClock;

/**
 * The source inventory of one Manager incarnation (DESIGN §4): the ordered resident map
 * {@code (StateKey, medium) → residence} and the bounded journal of residency changes, with the readers
 * built on them (coalesced intervals, snapshot scans). Session ends use the one implementation made by
 * {@link #create}: its broadcast wake-up and coalescing windows are internal to this module.
 *
 * <p>Every successful mutation takes the next residency sequence of this incarnation, contiguously from 1,
 * under the inventory lock together with the resident-map change and the journal append, then stamps the
 * publication time (PERF-1). Mutations never block on readers: a full journal trims its oldest entries
 * (BND-5) and a reader that needed them gets {@link ReadOutcome.Trimmed}. Nothing is encoded under the
 * inventory lock (BND-1). All methods are thread-safe.
 */
public interface InventorySource {
    /** A new, empty source for one incarnation using the host's monotonic clock. */
    static InventorySource create(InventoryConfig config) {
        return create(config, ProtocolClock.monotonicTimeOnly()::nanoTime);
    }

    /** A new, empty source; {@code monoNanos} stands in for {@code System.nanoTime()} (tests inject it). */
    static InventorySource create(InventoryConfig config, LongSupplier monoNanos) {
        return orbitkv.inventory.source.SourceInventory.create(config, monoNanos);
    }

    /** The configuration this source was created with. */
    InventoryConfig config();

    /**
     * Records that {@code (key, medium)} is resident with {@code sizeBytes} (a new residence generation,
     * also when it was already resident: INV-3).
     *
     * @throws IllegalArgumentException if {@code sizeBytes < 0}; nothing changes
     */
    MutationResult put(StateKey key, Medium medium, long sizeBytes);

    /** Records that {@code (key, medium)} is no longer resident; only that medium (PUB-8). */
    MutationResult delete(StateKey key, Medium medium);

    /** The last assigned residency sequence (0 before the first mutation). */
    long headSequence();

    /** The oldest retained journal sequence ({@code head + 1} when nothing is retained). */
    long oldestRetainedSequence();

    /** Journal and publication status, consistent under the lock (DIAG-1). */
    JournalStatus status();

    /** The latest publication stamp (PERF-1); a volatile read, no lock. */
    PublicationStamp lastPublication();

    /**
     * Coalesced intervals of the journal after {@code fromExclusive} through the current head, restricted
     * to {@code scope}, partitioned by the input and frame bounds (PUB-1, DELTA-3); at most
     * {@code intervalsMax} intervals. Equivalent to {@code read(fromExclusive, headSequence(), scope, intervalsMax)}.
     */
    ReadOutcome read(long fromExclusive, Scope scope, int intervalsMax);

    /**
     * As {@link #read(long, Scope, int)} but ending at {@code min(throughInclusive, head)}.
     *
     * @throws IllegalArgumentException if {@code fromExclusive < 0}, {@code throughInclusive < fromExclusive}
     *     or {@code intervalsMax < 1}
     */
    ReadOutcome read(long fromExclusive, long throughInclusive, Scope scope, int intervalsMax);

    /**
     * One page of the current residences (the resident map, not the journal), in resident-map order, strictly
     * after {@code after} (from the start when empty), only of {@code namespace} when one is given (a
     * namespace-filtered listing seeks to it and stops past it: it never walks other namespaces). Taken under one
     * inventory-lock hold together with the head sequence; at most {@code limit} records are copied, so the hold
     * is bounded. This is what {@code GET /cache/metadata/residences} lists.
     *
     * @throws IllegalArgumentException if {@code limit} is not 1..{@link ResidencePage#LIMIT_MAX}; nothing changes
     */
    ResidencePage residences(java.util.Optional<Namespace> namespace, java.util.Optional<ResidencePosition> after, int limit);

    /** Opens a snapshot attempt: captures S0 now (SNAP-1). */
    SnapshotScan openSnapshot(Scope scope);

    /**
     * The intentional coalescing wait recorded by every window of this source (DIAG-3), in seconds, apart
     * from transport lag: a snapshot for the owner of the metrics registry to expose.
     */
    SecondsHistogram intentionalWaitSeconds();
}
