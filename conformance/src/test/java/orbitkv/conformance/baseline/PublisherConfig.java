package orbitkv.conformance.baseline;

/**
 * Settings of the etcd block publisher baseline (DESIGN §4, design section <em>Publication and coalescing</em>).
 * It exists only as the measured baseline of the ablations (PERF-5); no production module writes block keys.
 *
 * @param variant {@link Variant#FROZEN}: no coalescing, no window; {@link Variant#COALESCING}: a coalescing
 *     window, then coalesced intervals split into size-limited transactions
 * @param windowMs quiet period after the latest mutation before a coalescing read (0 = read at once)
 * @param maxWaitMs cap on the intentional wait after the first unread mutation; never extended (PUB-5)
 * @param opsPerTxnMax block operations per etcd transaction (the cursor put comes on top); etcd's default
 *     {@code --max-txn-ops} is 128
 * @param txnBytesMax encoded key + value bytes of the block operations of one transaction (etcd's default
 *     request bound is 1.5 MiB)
 * @param callTimeoutMs deadline of every etcd call; a call past it is an ambiguous result
 */
public record PublisherConfig(Variant variant, long windowMs, long maxWaitMs, int opsPerTxnMax, int txnBytesMax,
        long callTimeoutMs) {
    /** The two publisher variants of the ablation (PERF-5). */
    public enum Variant {
        /** The frozen publisher: every journal position as read, uncoalesced, published at once. */
        FROZEN,
        /** Coalescing only: the same etcd layout, coalesced windows (PUB-1). */
        COALESCING
    }

    /** etcd's default {@code --max-txn-ops}. */
    public static final int ETCD_TXN_OPS_MAX = 128;
    public static final int DEFAULT_OPS_PER_TXN_MAX = 64;
    public static final int DEFAULT_TXN_BYTES_MAX = 1 << 20;
    public static final long DEFAULT_CALL_TIMEOUT_MS = 2_000;

    public PublisherConfig {
        java.util.Objects.requireNonNull(variant, "variant must not be null");
        if (windowMs < 0 || maxWaitMs < 0) {
            throw new IllegalArgumentException("windowMs and maxWaitMs must be >= 0, got " + windowMs + " / " + maxWaitMs);
        }
        if (windowMs > maxWaitMs && maxWaitMs > 0) {
            throw new IllegalArgumentException("windowMs (" + windowMs + ") must not exceed maxWaitMs (" + maxWaitMs + ")");
        }
        if (variant == Variant.FROZEN && (windowMs != 0 || maxWaitMs != 0)) {
            throw new IllegalArgumentException("the frozen publisher has no window, got windowMs=" + windowMs
                    + " maxWaitMs=" + maxWaitMs);
        }
        if (opsPerTxnMax < 1 || opsPerTxnMax > ETCD_TXN_OPS_MAX - 1) {
            throw new IllegalArgumentException("opsPerTxnMax must be 1.." + (ETCD_TXN_OPS_MAX - 1)
                    + " (one op of etcd's " + ETCD_TXN_OPS_MAX + " is the cursor), got " + opsPerTxnMax);
        }
        if (txnBytesMax < 1024) {
            throw new IllegalArgumentException("txnBytesMax must be >= 1024, got " + txnBytesMax);
        }
        if (callTimeoutMs < 1) {
            throw new IllegalArgumentException("callTimeoutMs must be >= 1, got " + callTimeoutMs);
        }
    }

    /** The frozen publisher. */
    public static PublisherConfig frozen() {
        return new PublisherConfig(Variant.FROZEN, 0, 0, DEFAULT_OPS_PER_TXN_MAX, DEFAULT_TXN_BYTES_MAX, DEFAULT_CALL_TIMEOUT_MS);
    }

    /** Coalescing only, with a {@code windowMs} quiet period and a {@code max(windowMs, 5)} ms cap (0 = no wait). */
    public static PublisherConfig coalescing(long windowMs) {
        long cap = windowMs == 0 ? 0 : Math.max(windowMs, 5);
        return new PublisherConfig(Variant.COALESCING, windowMs, cap, DEFAULT_OPS_PER_TXN_MAX, DEFAULT_TXN_BYTES_MAX,
                DEFAULT_CALL_TIMEOUT_MS);
    }

    public PublisherConfig withOpsPerTxnMax(int ops) {
        return new PublisherConfig(variant, windowMs, maxWaitMs, ops, txnBytesMax, callTimeoutMs);
    }

    public PublisherConfig withCallTimeoutMs(long ms) {
        return new PublisherConfig(variant, windowMs, maxWaitMs, opsPerTxnMax, txnBytesMax, ms);
    }

    /** A short label for tables: {@code frozen}, {@code coalescing-2ms}. */
    public String label() {
        return variant == Variant.FROZEN ? "frozen" : "coalescing-" + windowMs + "ms";
    }
}
