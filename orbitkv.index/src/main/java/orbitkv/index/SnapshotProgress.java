package orbitkv.index;

/**
 * Progress of the current staging attempt, for diagnostics only (DIAG-1).
 *
 * @param s0 the captured start sequence
 * @param pagesStaged pages received
 * @param stagedRows rows held by staging, tombstones included
 * @param replayCursor the staging replay cursor (starts at S0, SNAP-6); never a resume point (SNAP-8)
 */
public record SnapshotProgress(long s0, long pagesStaged, long stagedRows, long replayCursor) {
}
