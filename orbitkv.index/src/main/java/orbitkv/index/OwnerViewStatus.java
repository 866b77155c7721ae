package orbitkv.index;

import java.util.Optional;
import java.util.UUID;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.ScopeDigest;
import orbitkv.membership.Incarnation;

/**
 * One owner's detail in paginated diagnostics (DIAG-1, IDX-8).
 *
 * @param owner the source incarnation
 * @param state the owner view state
 * @param viewId the installed view, if any
 * @param scopeDigest the installed view's scope digest, if any
 * @param watermark the installed applied cursor ({@code -1} without an installed view)
 * @param sourceHead the last advertised source head ({@code -1} if never seen; IDX-11)
 * @param receiptAgeMs requester-side age of the last frame or liveness ({@code -1} if never; IDX-12)
 * @param rows installed rows
 * @param bytes budget bytes charged for this owner (installed + staging)
 * @param installedSequence the watermark that {@code installedMonoNanos} belongs to: S1 of the last commit
 *     or {@code to} of the last applied frame that carried records ({@code -1} if none). Duplicates and
 *     record-less progress never rewrite it (PERF-1, measurement contract s2.10-performance-v2)
 * @param installedMonoNanos monotonic-clock stamp ({@code System.nanoTime()} in production) taken after the
 *     rows, coverage and accounting of that installation were committed under the index lock ({@code -1} if none)
 * @param lastResetCause the last reset, if any
 * @param snapshot the current staging attempt, if any
 */
public record OwnerViewStatus(Incarnation owner, OwnerState state, Optional<UUID> viewId,
        Optional<ScopeDigest> scopeDigest, long watermark, long sourceHead, long receiptAgeMs, long rows, long bytes,
        long installedSequence, long installedMonoNanos, Optional<ResetCause> lastResetCause, Optional<SnapshotProgress> snapshot) {
}
