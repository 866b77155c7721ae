package orbitkv.inventory;

import java.util.List;
import java.util.Objects;

/**
 * One snapshot attempt on the source side (DESIGN §5 *Snapshot with concurrent mutation*, steps 1–4).
 * S0 is captured when the scan is opened (SNAP-1); {@link #nextPage()} walks the ordered resident map in
 * bounded pages with a strictly increasing {@code (StateKey, medium)} cursor, releasing the inventory lock
 * between pages, with real sequences and only in-scope namespaces (SNAP-2); after the last page S1 is
 * captured, and {@link #nextReplay(int)} yields the coalesced replay of {@code (S0, S1]} (SNAP-3). A
 * trimmed replay interval aborts the attempt with {@link SnapshotAbortCause#SNAPSHOT_ABORTED_TRIMMED}
 * (SNAP-4). Not thread-safe: one owner (a session) drives it; mutations may run concurrently.
 *
 * <p>States: SCANNING → REPLAYING → DONE, or → ABORTED from SCANNING or REPLAYING. Calling a step in the
 * wrong state throws {@link IllegalStateException} naming the edge.
 */
public interface SnapshotScan {
    /** The scope pages and replay are filtered by. */
    Scope scope();

    /** S0: the journal head captured before the first page. */
    long s0();

    /** The next page, the end of the scan (S1 captured), or an abort when (S0, …] is already trimmed. */
    ScanStep nextPage();

    /**
     * Up to {@code intervalsMax} further coalesced replay intervals of {@code (S0, S1]}, contiguous from
     * where the previous call ended; {@link ReplayStep.Replay#complete()} once S1 is reached.
     */
    ReplayStep nextReplay(int intervalsMax);

    /** One step of the scan. */
    sealed interface ScanStep permits ScanStep.Page, ScanStep.ScanEnd, ScanStep.Aborted {
        /**
         * A bounded page (SNAP-2).
         *
         * @param ordinal 1, 2, 3, … within this attempt
         * @param records strictly increasing by {@code (StateKey, medium)}, all puts with real sequences;
         *     every record is after every record of earlier pages
         * @param accountedBytes the page's bytes by the journal entry formula (bounded by pageBytesMax)
         */
        record Page(long ordinal, List<ResidenceRecord> records, long accountedBytes) implements ScanStep {
            public Page {
                records = List.copyOf(Objects.requireNonNull(records, "page records must not be null"));
                if (ordinal < 1) {
                    throw new IllegalArgumentException("page ordinal must be >= 1, got " + ordinal);
                }
            }
        }

        /**
         * The scan finished; S1 is the head captured after the last page (SNAP-3).
         *
         * @param s1 the replay target, {@code >= s0}
         * @param pageCount pages produced
         * @param maxScannedSequence highest record sequence in any page, 0 if none (SNAP-7)
         * @param scannedRecords records in all pages
         */
        record ScanEnd(long s1, long pageCount, long maxScannedSequence, long scannedRecords) implements ScanStep {}

        /** The attempt is aborted (SNAP-4). */
        record Aborted(SnapshotAbortCause cause, String detail) implements ScanStep {}
    }

    /** One step of the replay. */
    sealed interface ReplayStep permits ReplayStep.Replay, ReplayStep.Aborted {
        /**
         * Coalesced intervals continuing the replay (SNAP-3), with the same rules as deltas.
         *
         * @param intervals contiguous, starting where the previous step ended (at S0 first)
         * @param complete true iff the replay now reached S1
         */
        record Replay(List<CoalescedInterval> intervals, boolean complete) implements ReplayStep {
            public Replay {
                intervals = List.copyOf(Objects.requireNonNull(intervals, "replay intervals must not be null"));
            }
        }

        /** The attempt is aborted; the receiver discards staging and retries from a new S0 (SNAP-4). */
        record Aborted(SnapshotAbortCause cause, String detail) implements ReplayStep {}
    }

    /** Why a snapshot attempt was aborted. */
    enum SnapshotAbortCause {
        /** A needed part of {@code (S0, S1]} was trimmed from the journal (SNAP-4, BND-5). */
        SNAPSHOT_ABORTED_TRIMMED,
        /** A replay record does not fit one frame even alone (DELTA-3). */
        RECORD_TOO_LARGE
    }
}
