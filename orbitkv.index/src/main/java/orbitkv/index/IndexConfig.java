package orbitkv.index;

/**
 * GlobalIndex settings (DESIGN §9). Each has a unit in its name and a default constant; {@link #validate()}
 * is the one place that checks them and names both sides of a broken relation (BND-6).
 *
 * @param indexBytesMax one budget for installed rows, the reverse owner index and staging (SNAP-12)
 * @param freshnessBudgetMs receipt age beyond which an owner no longer counts as complete (IDX-12)
 * @param lookupKeysMax keys per lookup call (IDX-9)
 * @param lookupBytesMax encoded bytes per lookup call: sum of namespace + key bytes (IDX-9)
 * @param replicasPerMediumMax replicas returned per key and medium before truncation (IDX-9)
 * @param cleanupBatchRowsMax rows freed per asynchronous cleanup batch of a removed owner (IDX-1)
 * @param diagnosticsPageSizeMax owners per diagnostics page (IDX-8, DIAG-1)
 */
public record IndexConfig(long indexBytesMax, long freshnessBudgetMs, int lookupKeysMax, int lookupBytesMax,
        int replicasPerMediumMax, int cleanupBatchRowsMax, int diagnosticsPageSizeMax) {
    /** 256 MiB. */
    public static final long INDEX_BYTES_MAX_DEFAULT = 256L << 20;
    /** 5 s. */
    public static final long FRESHNESS_BUDGET_MS_DEFAULT = 5_000;
    /** 128 keys. */
    public static final int LOOKUP_KEYS_MAX_DEFAULT = 128;
    /** 64 KiB. */
    public static final int LOOKUP_BYTES_MAX_DEFAULT = 64 << 10;
    /** 4 replicas per medium. */
    public static final int REPLICAS_PER_MEDIUM_MAX_DEFAULT = 4;
    /** 4,096 rows per cleanup batch. */
    public static final int CLEANUP_BATCH_ROWS_MAX_DEFAULT = 4_096;
    /** 256 owners per diagnostics page. */
    public static final int DIAGNOSTICS_PAGE_SIZE_MAX_DEFAULT = 256;

    public IndexConfig {
        validate(indexBytesMax, freshnessBudgetMs, lookupKeysMax, lookupBytesMax, replicasPerMediumMax,
                cleanupBatchRowsMax, diagnosticsPageSizeMax);
    }

    /** The defaults of DESIGN §9. */
    public static IndexConfig defaults() {
        return new IndexConfig(INDEX_BYTES_MAX_DEFAULT, FRESHNESS_BUDGET_MS_DEFAULT, LOOKUP_KEYS_MAX_DEFAULT,
                LOOKUP_BYTES_MAX_DEFAULT, REPLICAS_PER_MEDIUM_MAX_DEFAULT, CLEANUP_BATCH_ROWS_MAX_DEFAULT,
                DIAGNOSTICS_PAGE_SIZE_MAX_DEFAULT);
    }

    public IndexConfig withIndexBytesMax(long v) {
        return new IndexConfig(v, freshnessBudgetMs, lookupKeysMax, lookupBytesMax, replicasPerMediumMax,
                cleanupBatchRowsMax, diagnosticsPageSizeMax);
    }

    public IndexConfig withCleanupBatchRowsMax(int v) {
        return new IndexConfig(indexBytesMax, freshnessBudgetMs, lookupKeysMax, lookupBytesMax, replicasPerMediumMax,
                v, diagnosticsPageSizeMax);
    }

    /** Re-checks this configuration (it is already checked at construction). */
    public void validate() {
        validate(indexBytesMax, freshnessBudgetMs, lookupKeysMax, lookupBytesMax, replicasPerMediumMax,
                cleanupBatchRowsMax, diagnosticsPageSizeMax);
    }

    private static void validate(long indexBytesMax, long freshnessBudgetMs, int lookupKeysMax, int lookupBytesMax,
            int replicasPerMediumMax, int cleanupBatchRowsMax, int diagnosticsPageSizeMax) {
        positive("indexBytesMax", indexBytesMax);
        positive("freshnessBudgetMs", freshnessBudgetMs);
        positive("lookupKeysMax", lookupKeysMax);
        positive("lookupBytesMax", lookupBytesMax);
        positive("replicasPerMediumMax", replicasPerMediumMax);
        positive("cleanupBatchRowsMax", cleanupBatchRowsMax);
        positive("diagnosticsPageSizeMax", diagnosticsPageSizeMax);
        if (freshnessBudgetMs > Long.MAX_VALUE / 1_000_000) {
            throw new IllegalArgumentException("freshnessBudgetMs " + freshnessBudgetMs + " overflows nanoseconds");
        }
        // One lookup key costs at least 2 bytes (1-byte namespace + 1-byte key): a byte bound below that
        // would refuse every call; a key bound above the byte bound / 2 can never be reached.
        if (lookupBytesMax < 2) {
            throw new IllegalArgumentException("lookupBytesMax (" + lookupBytesMax + ") must be >= 2 bytes (one minimal key)");
        }
    }

    private static void positive(String name, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be > 0, got " + value);
        }
    }
}
