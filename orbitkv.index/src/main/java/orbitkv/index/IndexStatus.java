package orbitkv.index;

/**
 * The index-wide summary of diagnostics (DIAG-1); per-owner detail is in {@link StatusPage}.
 *
 * @param coverage the current discovery state for in-scope namespaces
 * @param viewGeneration the current view generation
 * @param membershipRevision the revision of the last membership view applied
 * @param membershipValid whether that view admits remote members
 * @param owners admitted remote owners
 * @param ownersNotInstalled admitted remote owners without a current installed view
 * @param budgetBytesUsed bytes charged (rows, reverse owner index, staging)
 * @param budgetBytesMax the index budget
 * @param cleanupPendingRows rows of removed owners not yet freed
 * @param viewsWithdrawn owner views withdrawn because they could not fit the budget (SNAP-12)
 * @param budgetBytesPeak the high-water mark of {@code budgetBytesUsed} since the index was created (DIAG-3)
 */
public record IndexStatus(Coverage coverage, long viewGeneration, long membershipRevision, boolean membershipValid,
        int owners, int ownersNotInstalled, long budgetBytesUsed, long budgetBytesMax, long cleanupPendingRows,
        long viewsWithdrawn, long budgetBytesPeak) {
}
