package orbitkv.server.metrics;

import static orbitkv.server.metrics.MetricFamily.counter;
import static orbitkv.server.metrics.MetricFamily.gauge;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import orbitkv.index.LockHoldSnapshot;
import orbitkv.server.incarnation.ClusterMetadata;
import orbitkv.server.incarnation.CurrentIncarnation;
import orbitkv.server.incarnation.HealReport;

/**
 * The figures of whichever incarnation of this process currently runs, as data over one {@link IncarnationFigures}
 * per scrape (DIAG-2, DIAG-3: bounded labels only, never an incarnation label): inventory, index, membership, await,
 * the session and transfer ends, and how healing goes. Added once by the runtime when it wires the first incarnation;
 * each scrape reads the incarnation current then. After a heal the session and transfer families read the new
 * incarnation's ends, which start again from zero (Prometheus reads a counter reset).
 */
public final class IncarnationMetricFamilies {
    /** The current incarnation's figures and the heal report, at one scrape. */
    public record Current(IncarnationFigures figures, HealReport heal, long nodeEpoch) {}

    private IncarnationMetricFamilies() {}

    /** The current incarnation's families and the heal families (issue 17 item 5). */
    public static void register(ManagerMetrics metrics, CurrentIncarnation incarnation) {
        List<MetricFamily<Current>> f = new ArrayList<>();
        families(incarnation.current()).forEach(i -> f.add(i.over(Current::figures)));
        f.add(counter("orbitkv_membership_heal_attempts", "registration attempts made to heal a fenced incarnation",
                c -> c.heal().attempts()));
        f.add(counter("orbitkv_membership_heals", "new incarnations registered by healing a fenced one",
                c -> c.heal().heals()));
        f.add(gauge("orbitkv_membership_healing", "1 while the current incarnation is fenced and heal attempts run, else 0",
                c -> "healing".equals(c.heal().state()) ? 1 : 0));
        f.add(gauge("orbitkv_membership_node_epoch", "node epoch of the current incarnation (a heal registers the next one)",
                Current::nodeEpoch));
        metrics.add(() -> new Current(IncarnationFigures.of(incarnation.current()), incarnation.heal(),
                incarnation.self().nodeEpoch()), f);
    }

    /** The families of the incarnation {@code current} names when scraped (no heal families). */
    public static void register(ManagerMetrics metrics, Supplier<ClusterMetadata> current) {
        metrics.add(() -> IncarnationFigures.of(current.get()), families(current.get()));
    }

    /** The families; the session and transfer ends' exist when {@code first} runs them (every later incarnation does too). */
    static List<MetricFamily<IncarnationFigures>> families(ClusterMetadata first) {
        List<MetricFamily<IncarnationFigures>> f = new ArrayList<>();
        f.add(SessionMetricFamilies.INTENTIONAL_WAIT.over(IncarnationFigures::intentionalWait));
        if (first.sessions().isPresent()) {
            SessionMetricFamilies.FAMILIES.forEach(s -> f.add(s.over(i -> i.sessions().orElseThrow())));
        }
        if (first.transfer().isPresent()) {
            TransferMetricFamilies.FAMILIES.forEach(t -> f.add(t.over(i -> i.transfer().orElseThrow())));
        }
        f.addAll(index());
        f.addAll(membership());
        return List.copyOf(f);
    }

    private static List<MetricFamily<IncarnationFigures>> index() {
        return List.of(
                gauge("orbitkv_inventory_journal_bytes", "accounted journal bytes retained", i -> i.journal().journalBytes()),
                gauge("orbitkv_inventory_journal_peak_bytes", "peak accounted journal bytes", i -> i.journal().journalPeakBytes()),
                gauge("orbitkv_index_lock_hold_seconds",
                        "upper bound of the lock-hold bucket holding the quantile, per index lock (IDX-1)",
                        List.of("lock", "quantile"), (i, out) -> {
                            lockHold(out, "apply", i.applyLockHold());
                            lockHold(out, "lookup", i.lookupLockHold());
                        }),
                counter("orbitkv_index_lock_holds", "index lock holds measured", List.of("lock"), (i, out) -> {
                    out.value(i.applyLockHold().total(), "apply");
                    out.value(i.lookupLockHold().total(), "lookup");
                }),
                gauge("orbitkv_index_budget_bytes_used", "GlobalIndex bytes charged", i -> i.index().budgetBytesUsed()),
                gauge("orbitkv_index_budget_bytes_peak", "high-water mark of GlobalIndex bytes charged",
                        i -> i.index().budgetBytesPeak()),
                gauge("orbitkv_index_owners_not_installed", "admitted owners without a current view",
                        i -> i.index().ownersNotInstalled()),
                gauge("orbitkv_session_source_limit_refused_members",
                        "current members this source refuses with SESSION_LIMIT and has not served since (BND-3)",
                        IncarnationFigures::sessionLimitRefusedMembers),
                counter("orbitkv_session_source_limit_refusal_episodes",
                        "SESSION_LIMIT episodes of current members (each logged once; ends when served or gone)",
                        IncarnationFigures::sessionLimitEpisodes));
    }

    private static List<MetricFamily<IncarnationFigures>> membership() {
        return List.of(
                gauge("orbitkv_membership_members", "admitted members in the current view", IncarnationFigures::members),
                gauge("orbitkv_membership_lease_degraded", "1 while lease renewals fail or the incarnation is fenced, else 0",
                        i -> i.lease().degraded() ? 1 : 0),
                counter("orbitkv_membership_lease_renewals_failed", "lease renewal calls that failed or timed out (each retried)",
                        i -> i.lease().failedRenewals()),
                counter("orbitkv_membership_records_refused",
                        "member records never admitted, by reason (unleased, key_mismatch, malformed)", List.of("reason"),
                        (i, out) -> {
                            out.value(i.refusedRecords().unleased(), "unleased");
                            out.value(i.refusedRecords().keyMismatch(), "key_mismatch");
                            out.value(i.refusedRecords().malformed(), "malformed");
                        }),
                gauge("orbitkv_await_waiters", "await requests waiting", IncarnationFigures::awaitWaiting),
                counter("orbitkv_await_refused", "await requests refused by the waiter bound or timed out", List.of("reason"),
                        (i, out) -> {
                            out.value(i.awaitRefusedTooMany(), "too_many_waiters");
                            out.value(i.awaitTimedOut(), "timeout");
                        }));
    }

    private static void lockHold(MetricFamily.Samples out, String lock, LockHoldSnapshot s) {
        out.value(s.quantileUpperBoundNanos(0.5) / 1e9, lock, "0.5");
        out.value(s.quantileUpperBoundNanos(0.99) / 1e9, lock, "0.99");
    }
}
