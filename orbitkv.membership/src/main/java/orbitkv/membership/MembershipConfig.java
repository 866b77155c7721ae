package orbitkv.membership;

/**
 * Timing and bounds of one membership registration (DESIGN §3; MEM-6, MEM-8). Every setting carries its
 * unit in its name; {@link #validate()} is the one place that checks them and names both sides of a
 * broken relation.
 *
 * <p>The fencing arithmetic (MEM-8, INV-7): a registration treats itself as expired at
 * {@code lastConfirmedRenewalSend + leaseTtlMs - fenceSafetyMarginMs} on the monotonic clock. With the
 * defaults (15 s TTL, 3 s margin, renewal every 2 s, 2 s per call) that is 12 s after the last renewal
 * that etcd confirmed. A leader loss stalls etcd requests for about 7 s; the renewals sent during the
 * stall time out after 2 s and are retried, so the first renewal after the new leader is elected is sent
 * at most about 2 + 7 + 2 = 11 s after the last confirmed one: before the 12 s deadline, so no false fence.
 * A real loss of quorum fences 12 s after the last confirmed renewal, 3 s before etcd could expire the lease.
 *
 * @param leaseTtlMs TTL requested for the member lease; a whole number of seconds, 2 s..3600 s
 * @param fenceSafetyMarginMs subtracted from the TTL for the local deadline; 0 <= margin < TTL
 * @param renewalIntervalMs delay between confirmed renewals; must be < leaseTtlMs - fenceSafetyMarginMs
 * @param etcdCallTimeoutMs deadline of every unary etcd call; must be < leaseTtlMs - fenceSafetyMarginMs
 * @param retryBackoffMinMs first delay before retrying a failed idempotent call, >= 1
 * @param retryBackoffMaxMs cap of the exponential retry delay, >= retryBackoffMinMs
 * @param memberPageSize keys per page when membership is read at a fixed revision, 1..10000
 */
public record MembershipConfig(
        long leaseTtlMs,
        long fenceSafetyMarginMs,
        long renewalIntervalMs,
        long etcdCallTimeoutMs,
        long retryBackoffMinMs,
        long retryBackoffMaxMs,
        int memberPageSize) {

    /** Default lease TTL: 15 s. */
    public static final long DEFAULT_LEASE_TTL_MS = 15_000;
    /** Default safety margin: 3 s (covers clock granularity, GC pauses and etcd's TTL rounding). */
    public static final long DEFAULT_FENCE_SAFETY_MARGIN_MS = 3_000;
    /** Default renewal interval: 2 s (six chances before the deadline). */
    public static final long DEFAULT_RENEWAL_INTERVAL_MS = 2_000;
    /** Default deadline of one etcd call: 2 s. */
    public static final long DEFAULT_ETCD_CALL_TIMEOUT_MS = 2_000;
    /** Default first retry delay: 100 ms. */
    public static final long DEFAULT_RETRY_BACKOFF_MIN_MS = 100;
    /** Default retry delay cap: 1 s. */
    public static final long DEFAULT_RETRY_BACKOFF_MAX_MS = 1_000;
    /** Default membership read page: 512 member records. */
    public static final int DEFAULT_MEMBER_PAGE_SIZE = 512;

    public MembershipConfig {
        validate(leaseTtlMs, fenceSafetyMarginMs, renewalIntervalMs, etcdCallTimeoutMs,
                retryBackoffMinMs, retryBackoffMaxMs, memberPageSize);
    }

    /** The defaults above. */
    public static MembershipConfig defaults() {
        return new MembershipConfig(DEFAULT_LEASE_TTL_MS, DEFAULT_FENCE_SAFETY_MARGIN_MS,
                DEFAULT_RENEWAL_INTERVAL_MS, DEFAULT_ETCD_CALL_TIMEOUT_MS, DEFAULT_RETRY_BACKOFF_MIN_MS,
                DEFAULT_RETRY_BACKOFF_MAX_MS, DEFAULT_MEMBER_PAGE_SIZE);
    }

    /** The pacing of retried idempotent etcd calls (registration, renewal, watch re-reads): no jitter. */
    public RetryBackoff retryBackoff() {
        return new RetryBackoff(retryBackoffMinMs, retryBackoffMaxMs, RetryBackoff.Jitter.NONE);
    }

    /** The lease TTL in whole seconds, as etcd grants it. */
    public long leaseTtlSeconds() {
        return leaseTtlMs / 1000;
    }

    /** {@code leaseTtlMs - fenceSafetyMarginMs}: how long after a confirmed renewal send the deadline falls. */
    public long fenceAfterRenewalMs() {
        return leaseTtlMs - fenceSafetyMarginMs;
    }

    private static void validate(long ttl, long margin, long renewal, long call, long min, long max, int page) {
        if (ttl < 2_000 || ttl > 3_600_000 || ttl % 1000 != 0) {
            throw new IllegalArgumentException(
                    "leaseTtlMs must be a whole number of seconds in 2000..3600000, got " + ttl);
        }
        if (margin < 0 || margin >= ttl) {
            throw new IllegalArgumentException("fenceSafetyMarginMs (" + margin
                    + ") must be >= 0 and < leaseTtlMs (" + ttl + ")");
        }
        if (renewal < 1 || renewal >= ttl - margin) {
            throw new IllegalArgumentException("renewalIntervalMs (" + renewal
                    + ") must be >= 1 and < leaseTtlMs - fenceSafetyMarginMs (" + (ttl - margin) + ")");
        }
        if (call < 1 || call >= ttl - margin) {
            throw new IllegalArgumentException("etcdCallTimeoutMs (" + call
                    + ") must be >= 1 and < leaseTtlMs - fenceSafetyMarginMs (" + (ttl - margin) + ")");
        }
        if (min < 1 || max < min) {
            throw new IllegalArgumentException("retryBackoffMinMs (" + min
                    + ") must be >= 1 and <= retryBackoffMaxMs (" + max + ")");
        }
        if (page < 1 || page > 10_000) {
            throw new IllegalArgumentException("memberPageSize must be 1..10000, got " + page);
        }
    }
}
