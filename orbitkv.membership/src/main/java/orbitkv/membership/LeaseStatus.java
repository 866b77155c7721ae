package orbitkv.membership;

/**
 * The conservative lease deadline of one registration, on the monotonic clock of this process
 * ({@code System.nanoTime()} unless a test injected another) (MEM-8).
 *
 * @param lastConfirmedRenewalNanos when the last renewal (or the grant) that etcd confirmed was sent
 * @param deadlineNanos {@code lastConfirmedRenewalNanos + TTL - margin}: the fence falls here
 * @param confirmedRenewals renewals confirmed since registration
 * @param failedRenewals renewal calls that failed or timed out (each was retried)
 */
public record LeaseStatus(long lastConfirmedRenewalNanos, long deadlineNanos, long confirmedRenewals,
                          long failedRenewals) {}
