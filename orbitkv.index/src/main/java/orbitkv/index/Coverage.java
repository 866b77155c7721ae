package orbitkv.index;

/**
 * The three discovery states returned with every lookup (DESIGN §6, IDX-7).
 */
public enum Coverage {
    /**
     * Every admitted member other than the requester has an installed view for this scope, fresh
     * within the freshness budget. Never a statement that nothing changed since those cuts (IDX-10).
     */
    CompleteAtWatermarks,
    /**
     * Some admitted member is missing, bootstrapping, repairing, stale or over budget; every candidate
     * is positive evidence only (INV-5).
     */
    PartialHints,
    /**
     * No distributed metadata: standalone, membership expired or suspended, cluster mismatch, or a
     * namespace outside the subscription scope. Local tiers still answer (INV-10).
     */
    Unavailable
}
