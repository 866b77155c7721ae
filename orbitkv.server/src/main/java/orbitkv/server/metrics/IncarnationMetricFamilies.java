package orbitkv.server.metrics;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.function.Supplier;
import orbitkv.index.LockHoldSnapshot;
import orbitkv.membership.MemberRecordRefusals;
import orbitkv.server.incarnation.ClusterMetadata;
import orbitkv.server.incarnation.CurrentIncarnation;
import orbitkv.server.incarnation.HealReport;

/**
 * The figures of whichever incarnation of this process currently runs (DIAG-2, DIAG-3: bounded labels only, never
 * an incarnation label): inventory, index, membership, await, the session and transfer ends, and how healing goes.
 * Registered once by the Manager core when it wires the first incarnation; each family reads the incarnation that is
 * current when scraped. After a heal the session and transfer families read the new incarnation's ends, which start
 * again from zero (Prometheus reads a counter reset).
 */
public final class IncarnationMetricFamilies {
    private IncarnationMetricFamilies() {}

    /** The current incarnation's families and the heal families (issue 17 item 5). */
    public static void register(PrometheusRegistry registry, CurrentIncarnation incarnation) {
        register(registry, incarnation::current);
        Supplier<HealReport> heal = incarnation::heal;
        CounterWithCallback.builder().name("orbitkv_membership_heal_attempts")
                .help("registration attempts made to heal a fenced incarnation")
                .callback(cb -> cb.call(heal.get().attempts())).register(registry);
        CounterWithCallback.builder().name("orbitkv_membership_heals")
                .help("new incarnations registered by healing a fenced one")
                .callback(cb -> cb.call(heal.get().heals())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_membership_healing")
                .help("1 while the current incarnation is fenced and heal attempts run, else 0")
                .callback(cb -> cb.call("healing".equals(heal.get().state()) ? 1 : 0)).register(registry);
        GaugeWithCallback.builder().name("orbitkv_membership_node_epoch")
                .help("node epoch of the current incarnation (a heal registers the next one)")
                .callback(cb -> cb.call(incarnation.self().nodeEpoch())).register(registry);
    }

    /** The families of the incarnation {@code current} names when scraped. */
    public static void register(PrometheusRegistry registry, Supplier<ClusterMetadata> current) {
        SessionMetricFamilies.registerIntentionalWait(registry, () -> current.get().source().intentionalWaitSeconds());
        if (current.get().sessions().isPresent()) { // registered once, when the Manager core wires the incarnation
            SessionMetricFamilies.register(registry, () -> current.get().sessions().orElseThrow().server().metrics(),
                    () -> current.get().sessions().orElseThrow().subscriber().metrics());
        }
        if (current.get().transfer().isPresent()) { // as the sessions: the current incarnation's transfer ends
            TransferMetricFamilies.register(registry, () -> current.get().transfer().orElseThrow().sourceStatus(),
                    () -> current.get().transfer().orElseThrow().engineStatus());
        }
        registerIndex(registry, current);
        registerMembership(registry, current);
    }

    private static void registerIndex(PrometheusRegistry registry, Supplier<ClusterMetadata> current) {
        GaugeWithCallback.builder().name("orbitkv_inventory_journal_bytes").help("accounted journal bytes retained")
                .callback(cb -> cb.call(current.get().source().status().journalBytes())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_inventory_journal_peak_bytes").help("peak accounted journal bytes")
                .callback(cb -> cb.call(current.get().source().status().journalPeakBytes())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_index_lock_hold_seconds")
                .help("upper bound of the lock-hold bucket holding the quantile, per index lock (IDX-1)")
                .labelNames("lock", "quantile").callback(cb -> {
                    lockHold(cb, "apply", current.get().index().applyLockHold());
                    lockHold(cb, "lookup", current.get().index().lookupLockHold());
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_index_lock_holds").help("index lock holds measured")
                .labelNames("lock").callback(cb -> {
                    cb.call(current.get().index().applyLockHold().total(), "apply");
                    cb.call(current.get().index().lookupLockHold().total(), "lookup");
                }).register(registry);
        GaugeWithCallback.builder().name("orbitkv_index_budget_bytes_used").help("GlobalIndex bytes charged")
                .callback(cb -> cb.call(current.get().index().status().budgetBytesUsed())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_index_budget_bytes_peak").help("high-water mark of GlobalIndex bytes charged")
                .callback(cb -> cb.call(current.get().index().status().budgetBytesPeak())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_index_owners_not_installed").help("admitted owners without a current view")
                .callback(cb -> cb.call(current.get().index().status().ownersNotInstalled())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_session_source_limit_refused_members")
                .help("current members this source refuses with SESSION_LIMIT and has not served since (BND-3)")
                .callback(cb -> cb.call(current.get().sourceSessionsRefusedMembers().size())).register(registry);
        CounterWithCallback.builder().name("orbitkv_session_source_limit_refusal_episodes")
                .help("SESSION_LIMIT episodes of current members (each logged once; ends when served or gone)")
                .callback(cb -> {
                    cb.call(current.get().sessions().map(cs -> cs.server().sessionLimitRefusals().episodes()).orElse(0L));
                }).register(registry);
    }

    private static void registerMembership(PrometheusRegistry registry, Supplier<ClusterMetadata> current) {
        GaugeWithCallback.builder().name("orbitkv_membership_members").help("admitted members in the current view")
                .callback(cb -> cb.call(current.get().membership().view().members().size())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_membership_lease_degraded")
                .help("1 while lease renewals fail or the incarnation is fenced, else 0")
                .callback(cb -> cb.call(current.get().membership().leaseStatus().degraded() ? 1 : 0)).register(registry);
        CounterWithCallback.builder().name("orbitkv_membership_lease_renewals_failed")
                .help("lease renewal calls that failed or timed out (each retried)")
                .callback(cb -> cb.call(current.get().membership().leaseStatus().failedRenewals())).register(registry);
        CounterWithCallback.builder().name("orbitkv_membership_records_refused")
                .help("member records never admitted, by reason (unleased, key_mismatch, malformed)")
                .labelNames("reason").callback(cb -> {
                    MemberRecordRefusals r = current.get().membership().refusedRecords();
                    cb.call(r.unleased(), "unleased");
                    cb.call(r.keyMismatch(), "key_mismatch");
                    cb.call(r.malformed(), "malformed");
                }).register(registry);
        GaugeWithCallback.builder().name("orbitkv_await_waiters").help("await requests waiting")
                .callback(cb -> cb.call(current.get().signals().waiting())).register(registry);
        CounterWithCallback.builder().name("orbitkv_await_refused").help("await requests refused by the waiter bound or timed out")
                .labelNames("reason").callback(cb -> {
                    cb.call(current.get().signals().refusedTooMany(), "too_many_waiters");
                    cb.call(current.get().signals().timedOut(), "timeout");
                }).register(registry);
    }

    private static void lockHold(GaugeWithCallback.Callback cb, String lock, LockHoldSnapshot s) {
        cb.call(s.quantileUpperBoundNanos(0.5) / 1e9, lock, "0.5");
        cb.call(s.quantileUpperBoundNanos(0.99) / 1e9, lock, "0.99");
    }
}
