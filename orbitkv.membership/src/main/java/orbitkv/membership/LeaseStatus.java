package orbitkv.membership;

import java.util.Objects;

/**
 * The conservative lease deadline of one registration, on the monotonic clock of this process
 * ({@code System.nanoTime()} unless a test injected another) (MEM-8), and how renewals are going.
 *
 * <p>{@link #state()} makes an etcd outage visible before the fence (issue 20 item 6): as soon as a renewal
 * fails, or none has been confirmed for longer than a renewal interval plus two call deadlines, the state is
 * {@link LeaseState#RENEWAL_FAILING} while the incarnation is still admitted; the fence itself still falls at
 * {@link #deadlineNanos()}. Status, health and coverage read it.
 *
 * @param lastConfirmedRenewalNanos when the last renewal (or the grant) that etcd confirmed was sent
 * @param deadlineNanos {@code lastConfirmedRenewalNanos + TTL - margin}: the fence falls here
 * @param confirmedRenewals renewals confirmed since registration
 * @param failedRenewals renewal calls that failed or timed out (each was retried)
 * @param state healthy, renewals failing (degraded, not yet fenced), or fenced
 * @param consecutiveFailedRenewals renewal failures since the last confirmed renewal
 */
public record LeaseStatus(long lastConfirmedRenewalNanos, long deadlineNanos, long confirmedRenewals,
                          long failedRenewals, LeaseState state, long consecutiveFailedRenewals) {
    /** How the lease of one registration is doing. */
    public enum LeaseState {
        /** Renewals are confirmed on time. */
        HEALTHY,
        /** Renewals fail or are overdue: etcd is unreachable or slow; the fence falls at the deadline unless one succeeds. */
        RENEWAL_FAILING,
        /** Fenced (irrevocable for this incarnation). */
        FENCED
    }

    public LeaseStatus {
        Objects.requireNonNull(state, "lease state");
        if (confirmedRenewals < 0 || failedRenewals < 0 || consecutiveFailedRenewals < 0) {
            throw new IllegalArgumentException("renewal counts must be >= 0");
        }
    }

    /** A healthy lease (tests and implementations without renewal tracking). */
    public LeaseStatus(long lastConfirmedRenewalNanos, long deadlineNanos, long confirmedRenewals, long failedRenewals) {
        this(lastConfirmedRenewalNanos, deadlineNanos, confirmedRenewals, failedRenewals, LeaseState.HEALTHY, 0);
    }

    /** True unless {@link LeaseState#HEALTHY}: status and health report "degraded" (or "fenced"). */
    public boolean degraded() {
        return state != LeaseState.HEALTHY;
    }
}
