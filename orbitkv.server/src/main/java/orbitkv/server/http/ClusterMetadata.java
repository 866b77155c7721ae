package orbitkv.server.http;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import orbitkv.index.GlobalIndex;
import orbitkv.index.KeyCandidates;
import orbitkv.index.LockHoldSnapshot;
import orbitkv.index.LookupOutcome;
import orbitkv.index.OwnerViewStatus;
import orbitkv.index.StatusPage;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.InventoryFence;
import orbitkv.inventory.InventorySessionServer;
import orbitkv.inventory.InventorySubscriber;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.JournalStatus;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.SubscriptionStatus;
import orbitkv.inventory.ViewReceiver;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.LeaseStatus;
import orbitkv.membership.Member;
import orbitkv.membership.MemberRecordRefusals;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipEvent;
import orbitkv.membership.MembershipView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Distributed metadata of a registered Manager: membership (etcd), this process's InventorySource and the
 * requester GlobalIndex (DESIGN §6, §7).
 *
 * <ul>
 *   <li>Query: the index's candidates, coverage and view generation; {@code Unavailable} with no remote
 *       candidates while membership is suspended or fenced, or for a namespace outside this Manager's
 *       scope (IDX-5, IDX-7, INV-10). Local tiers answer in every case (CacheApi).</li>
 *   <li>Sync: the fence {@code (cluster, self incarnation, head sequence)} after the submitted saves are
 *       resident (API-1, API-2); refused once fenced, since no peer admits this incarnation (INV-7).</li>
 *   <li>Await: validated, then bounded by {@link AwaitRegistry} until the index has an installed view of
 *       the source with watermark {@code >= inventory_sequence} (API-4, API-5, API-6).</li>
 * </ul>
 *
 * <p>Membership events arrive on the membership's watch thread: they are applied to the index first
 * (IDX-13), then wake the await waiters. Fencing is irrevocable (INV-7) and logged once with its cause.
 */
public final class ClusterMetadata implements DistributedMetadata {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterMetadata.class);
    /** view_id of an await answered for this Manager's own fence: its tiers are authoritative locally (DESIGN §6). */
    static final String LOCAL_VIEW_ID = "local";

    private final Membership membership;
    private final GlobalIndex index;
    private final InventorySource source;
    private final Scope scope;
    private final Incarnation self;
    private final ClusterIdentity cluster;
    private final AwaitRegistry awaits;
    private final ViewReceiver receiver;
    private volatile FlushThrough flush = FlushThrough.NONE;
    private volatile Sessions sessions;
    private volatile orbitkv.server.transfer.PeerTransfer transfer;

    /**
     * The two session ends of this Manager, attached once before the HTTP API serves (SES-1); their metric
     * snapshots join one set of families, told apart by the {@code side} label (DIAG-3).
     */
    public record Sessions(InventorySubscriber subscriber, InventorySessionServer server, int sessionsPerRequesterMax) {
        public Sessions {
            Objects.requireNonNull(subscriber, "subscriber");
            Objects.requireNonNull(server, "server");
        }
    }

    /**
     * @param waitersMax the await waiter bound (--await-waiters-max)
     */
    public ClusterMetadata(Membership membership, GlobalIndex index, InventorySource source, Scope scope, int waitersMax) {
        this.membership = Objects.requireNonNull(membership, "membership");
        this.index = Objects.requireNonNull(index, "index");
        this.source = Objects.requireNonNull(source, "source");
        this.scope = Objects.requireNonNull(scope, "scope");
        this.self = membership.incarnation();
        this.cluster = membership.cluster();
        this.awaits = new AwaitRegistry(waitersMax);
        this.receiver = new InstallSignallingReceiver(index, awaits::signal);
    }

    /**
     * The receiver to hand to the subscriber sessions: the GlobalIndex, waking await waiters after every
     * apply and commit.
     */
    public ViewReceiver viewReceiver() {
        return receiver;
    }

    /** Wires the session's FlushThrough (until then {@link FlushThrough#NONE}). */
    public void flushThrough(FlushThrough hook) {
        this.flush = Objects.requireNonNull(hook, "hook");
    }

    /**
     * Attaches the session ends: their status joins /cache/metadata/status, their metrics join the
     * registry when the HTTP API serves, and await asks the subscriber to flush (API-5).
     *
     * @throws IllegalStateException if attached twice
     */
    public void attachSessions(Sessions s) {
        if (sessions != null) {
            throw new IllegalStateException("sessions are attached once");
        }
        sessions = Objects.requireNonNull(s, "sessions");
        flushThrough(s.subscriber()::flushThrough);
    }

    /**
     * Attaches the transfer ends: peer restores use the engine, status and metrics show both ends.
     *
     * @throws IllegalStateException if attached twice
     */
    public void attachTransfer(orbitkv.server.transfer.PeerTransfer t) {
        if (transfer != null) {
            throw new IllegalStateException("transfer is attached once");
        }
        transfer = Objects.requireNonNull(t, "transfer");
    }

    @Override
    public Optional<orbitkv.server.transfer.PeerTransfer> transfer() {
        return Optional.ofNullable(transfer);
    }

    /** The membership listener: index first (IDX-13), then waiters re-check (fence, removal). */
    public void onMembershipEvent(MembershipEvent event) {
        index.onMembership(event.view());
        switch (event) {
            case MembershipEvent.Fenced f when f.cause() == MembershipEvent.FenceCause.SHUTDOWN ->
                    LOG.info("membership closed for shutdown: incarnation {}", f.fenced());
            case MembershipEvent.Fenced f -> LOG.warn("membership fenced: incarnation {} ({}); remote admission stopped, "
                    + "local cache service continues", f.fenced(), f.cause());
            case MembershipEvent.Suspended s -> LOG.warn("membership suspended: {}; remote admission stopped until re-read", s.cause());
            case MembershipEvent.Changed c -> LOG.info("membership view at revision {}: {} members",
                    c.view().revision(), c.view().members().size());
        }
        awaits.signal();
    }

    private boolean remoteAdmission() {
        return !membership.fenced() && membership.view().valid();
    }

    @Override
    public Lookup lookup(Namespace namespace, List<StateKey> keys) {
        if (!remoteAdmission() || !scope.contains(namespace)) {
            return Lookup.none(Coverage.Unavailable, index.status().viewGeneration(), keys.size());
        }
        return switch (index.lookup(keys)) {
            case LookupOutcome.Candidates c -> leaseDegraded(candidates(c));
            case LookupOutcome.Refused r -> throw new ApiException(ApiError.TOO_MANY_KEYS, "the index refuses a lookup of "
                    + r.actual() + " " + r.field() + "; at most " + r.limit());
        };
    }

    /**
     * While lease renewals fail (etcd unreachable), membership may already be stale: no answer claims
     * CompleteAtWatermarks; candidates stay positive evidence (issue 20 item 6).
     */
    private Lookup leaseDegraded(Lookup l) {
        return l.coverage() == Coverage.CompleteAtWatermarks && membership.leaseStatus().degraded()
                ? new Lookup(Coverage.PartialHints, l.viewGeneration(), l.remote(), l.truncated(), l.replicas()) : l;
    }

    /** The coverage status reports: the index's, downgraded like {@link #leaseDegraded}; Unavailable without admission. */
    private Coverage reportedCoverage() {
        if (!remoteAdmission()) {
            return Coverage.Unavailable;
        }
        Coverage c = Coverage.valueOf(index.coverage().name());
        return c == Coverage.CompleteAtWatermarks && membership.leaseStatus().degraded() ? Coverage.PartialHints : c;
    }

    private ApiModel.MembershipStatus membershipStatus(MembershipView view) {
        LeaseStatus lease = membership.leaseStatus();
        MemberRecordRefusals refused = membership.refusedRecords();
        return new ApiModel.MembershipStatus(view.revision(), view.valid() && !membership.fenced(), view.members().size(),
                lease.state().name().toLowerCase(Locale.ROOT).replace('_', '-'), lease.failedRenewals(),
                new ApiModel.RefusedRecords(refused.unleased(), refused.keyMismatch(), refused.malformed()));
    }

    private static Lookup candidates(LookupOutcome.Candidates c) {
        List<List<ApiModel.Replica>> remote = new ArrayList<>(c.keys().size());
        List<Boolean> truncated = new ArrayList<>(c.keys().size());
        List<List<orbitkv.index.Replica>> raw = new ArrayList<>(c.keys().size());
        for (KeyCandidates k : c.keys()) {
            raw.add(k.replicas());
            List<ApiModel.Replica> replicas = new ArrayList<>(k.replicas().size());
            for (orbitkv.index.Replica r : k.replicas()) {
                replicas.add(new ApiModel.Replica(owner(r.owner()), r.medium().name(), r.sequence(), r.sizeBytes(), false, r.stale()));
            }
            remote.add(replicas);
            truncated.add(k.truncated());
        }
        return new Lookup(Coverage.valueOf(c.coverage().name()), c.viewGeneration(), remote, truncated, raw);
    }

    @Override
    public Optional<ApiModel.Fence> fence() {
        requireNotFenced();
        InventoryFence f = InventoryFence.of(cluster, self, source.headSequence());
        return Optional.of(new ApiModel.Fence(f.protocol(), f.clusterUuid().toString(), f.sourceNodeEpoch().value(),
                f.sourceIncarnation().toString(), f.inventorySequence()));
    }

    @Override
    public ApiModel.AwaitResponse await(JsonRequests.AwaitRequest request) throws InterruptedException {
        InventoryFence fence = request.fence();
        requireNotFenced();
        if (!fence.clusterUuid().equals(cluster.uuid())) {
            throw new ApiException(ApiError.CLUSTER_MISMATCH, "fence.cluster_uuid " + fence.clusterUuid()
                    + " is not this Manager's cluster " + cluster.name() + " (" + cluster.uuid() + ")");
        }
        if (!request.scopeDigest().equals(scope.digest())) {
            throw new ApiException(ApiError.SCOPE_DIGEST_MISMATCH, "scope_digest " + request.scopeDigest().hex()
                    + " is not this Manager's scope digest " + scope.digest().hex());
        }
        Incarnation src = fence.sourceIncarnation();
        if (src.equals(self)) {
            return ownFence(fence);
        }
        requireAdmission();
        flush.flushThrough(src, fence.inventorySequence());
        return awaits.await(request.timeoutMs(), () -> probe(src, fence.inventorySequence()));
    }

    /** This Manager's own fence: its tiers and source are authoritative locally; no view to wait for. */
    private ApiModel.AwaitResponse ownFence(InventoryFence fence) {
        long head = source.headSequence();
        if (fence.inventorySequence() > head) {
            throw new ApiException(ApiError.INVALID_FIELD_VALUE, "fence.inventory_sequence " + fence.inventorySequence()
                    + " is beyond this incarnation's head sequence " + head);
        }
        return new ApiModel.AwaitResponse(head, LOCAL_VIEW_ID);
    }

    private AwaitRegistry.Result<ApiModel.AwaitResponse> probe(Incarnation src, long target) {
        requireNotFenced();
        requireAdmission();
        MembershipView view = membership.view();
        if (!view.isAdmitted(src)) {
            Optional<Member> current = view.member(src.nodeId());
            if (current.isPresent() && current.get().incarnation().epoch().value() >= src.epoch().value()) {
                throw new ApiException(ApiError.OLD_INCARNATION, "fence.source_incarnation " + src
                        + " is not admitted: node " + src.nodeId().value() + " is now " + current.get().incarnation());
            }
            return new AwaitRegistry.Result.Pending<>(ApiError.NOT_ADMITTED, "fence.source_incarnation " + src
                    + " is not admitted by membership at revision " + view.revision());
        }
        Optional<InstalledCursor> cursor = index.installedCursor(src);
        if (cursor.isPresent() && cursor.get().watermark() >= target) {
            return new AwaitRegistry.Result.Ready<>(new ApiModel.AwaitResponse(cursor.get().watermark(),
                    cursor.get().viewId().toString()));
        }
        return new AwaitRegistry.Result.Pending<>(ApiError.AWAIT_TIMEOUT, "no installed view of " + src
                + " applied through " + target + " within timeout_ms (installed: "
                + cursor.map(c -> c.viewId() + " at " + c.watermark()).orElse("none") + ")");
    }

    private void requireNotFenced() {
        if (membership.fenced()) {
            throw new ApiException(ApiError.MEMBERSHIP_EXPIRED, "this Manager's incarnation " + self
                    + " is fenced: no remote admission (local cache service continues)");
        }
    }

    private void requireAdmission() {
        if (!membership.view().valid()) {
            throw new ApiException(ApiError.METADATA_UNAVAILABLE,
                    "membership is suspended (watch gap or unreachable etcd): no remote admission until it is re-read");
        }
    }

    @Override
    public ApiModel.StatusResponse status(int ownersLimit, String pageToken, long headSequence) {
        StatusPage page;
        try {
            page = index.ownerStatus(ownersLimit, Optional.ofNullable(pageToken));
        } catch (IllegalArgumentException e) {
            throw new ApiException(ApiError.INVALID_QUERY_PARAMETER, e.getMessage());
        }
        MembershipView view = membership.view();
        JournalStatus j = source.status();
        List<ApiModel.OwnerStatus> owners = page.owners().stream().map(ClusterMetadata::ownerStatus).toList();
        return new ApiModel.StatusResponse(ClusterIdentity.PROTOCOL, new ApiModel.Cluster(cluster.name(), cluster.uuid().toString()),
                self(), new ApiModel.ScopeView(scope.digest().hex(), 1, namespaces(scope)),
                membershipStatus(view), reportedCoverage().name(),
                new ApiModel.InventoryStatus(j.headSequence(), j.oldestRetainedSequence(), j.journalBytes(),
                        j.journalPeakBytes(), new ApiModel.Stamp(j.lastPublication().sequence(), j.lastPublication().monoNanos())),
                owners, page.nextPageToken().orElse(null), sessionsStatus(), transferStatus());
    }

    private ApiModel.TransferStatus transferStatus() {
        orbitkv.server.transfer.PeerTransfer t = transfer;
        return t == null ? null : TransferStatusView.of(t);
    }

    private ApiModel.SessionsStatus sessionsStatus() {
        Sessions s = sessions;
        if (s == null) {
            return null;
        }
        SubscriptionStatus st = s.subscriber().status();
        List<ApiModel.RequesterSession> requester = st.sessions().stream().map(p -> new ApiModel.RequesterSession(
                owner(p.source()), p.state().name(), p.connects(), p.installs(), p.lastErrorCause())).toList();
        List<ApiModel.ServedSession> served = s.server().status().stream().map(p -> new ApiModel.ServedSession(
                owner(p.requester()), p.sessionId().toString(), p.phase().name(), p.cursor(), p.lastFrame(),
                p.outstandingBytes(), p.peakOutstandingBytes(), p.snapshotAttempts(), p.snapshotAborts())).toList();
        return new ApiModel.SessionsStatus(st.admittedSources(), s.sessionsPerRequesterMax(), !st.capacityIncomplete(),
                st.beyondLimit().stream().map(Incarnation::toString).toList(), requester, served,
                sourceSessionsRefusedMembers(), s.server().sessionLimitRefusals().episodes());
    }

    private static ApiModel.OwnerStatus ownerStatus(OwnerViewStatus o) {
        return new ApiModel.OwnerStatus(owner(o.owner()), o.state().name(), o.viewId().map(UUID::toString).orElse(null),
                o.watermark(), o.sourceHead(), o.receiptAgeMs(), o.rows(), o.bytes(),
                new ApiModel.Stamp(o.installedSequence() < 0 ? null : o.installedSequence(),
                        o.installedMonoNanos() < 0 ? null : o.installedMonoNanos()),
                o.lastResetCause().map(Enum::name).orElse(null));
    }

    static Object namespaces(Scope scope) {
        return scope instanceof Scope.NamespaceList list
                ? list.namespaces().stream().map(n -> new String(n.bytes(), StandardCharsets.UTF_8)).toList()
                : "all";
    }

    /**
     * "fenced" once fenced (also after shutdown deregistered; /health answers 503), "degraded" while
     * suspended, while lease renewals fail (etcd unreachable, before the fence: issue 20 item 6) or while
     * session capacity is incomplete (admitted sources beyond the per-requester limit, BND-3) or this source refuses
     * a current member with SESSION_LIMIT (beyond --source-sessions-max, issue 33), else "ok".
     */
    @Override
    public String healthStatus() {
        if (membership.fenced()) {
            return "fenced";
        }
        Sessions s = sessions;
        boolean capacityIncomplete = s != null && s.subscriber().status().capacityIncomplete();
        boolean refusingMembers = s != null && !s.server().sessionLimitRefusals().members().isEmpty();
        return membership.view().valid() && !capacityIncomplete && !refusingMembers && !membership.leaseStatus().degraded()
                ? "ok" : "degraded";
    }

    @Override
    public List<String> sourceSessionsRefusedMembers() {
        Sessions s = sessions;
        return s == null ? List.of()
                : s.server().sessionLimitRefusals().members().stream().map(Incarnation::toString).toList();
    }

    @Override
    public String mode() {
        return "distributed";
    }

    @Override
    public ApiModel.Owner self() {
        return owner(self);
    }

    static ApiModel.Owner owner(Incarnation i) {
        return new ApiModel.Owner(i.nodeId().value(), i.epoch().value(), i.toString());
    }

    /** Inventory, index, membership and await figures; bounded labels only (DIAG-2, DIAG-3). */
    @Override
    public void registerMetrics(PrometheusRegistry registry) {
        registerMetrics(registry, () -> this);
    }

    /**
     * Registers the figures of whichever incarnation {@code current} names when they are scraped (a healed
     * Manager's metadata is a new ClusterMetadata; the families stay registered once). The session families
     * read the current incarnation's ends: after a heal they start again from zero, which Prometheus reads as
     * a counter reset.
     */
    static void registerMetrics(PrometheusRegistry registry, java.util.function.Supplier<ClusterMetadata> current) {
        SessionMetricFamilies.registerIntentionalWait(registry, () -> current.get().source.intentionalWaitSeconds());
        Sessions s = current.get().sessions;
        if (s != null) { // registered once: the HTTP server calls this once, when it starts serving
            SessionMetricFamilies.register(registry, () -> current.get().sessions.server().metrics(),
                    () -> current.get().sessions.subscriber().metrics());
        }
        if (current.get().transfer != null) { // as the sessions: the current incarnation's transfer ends
            TransferMetricFamilies.register(registry, () -> current.get().transfer.sourceStatus(),
                    () -> current.get().transfer.engineStatus());
        }
        GaugeWithCallback.builder().name("orbitkv_inventory_journal_bytes").help("accounted journal bytes retained")
                .callback(cb -> cb.call(current.get().source.status().journalBytes())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_inventory_journal_peak_bytes").help("peak accounted journal bytes")
                .callback(cb -> cb.call(current.get().source.status().journalPeakBytes())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_index_lock_hold_seconds")
                .help("upper bound of the lock-hold bucket holding the quantile, per index lock (IDX-1)")
                .labelNames("lock", "quantile").callback(cb -> {
                    lockHold(cb, "apply", current.get().index.applyLockHold());
                    lockHold(cb, "lookup", current.get().index.lookupLockHold());
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_index_lock_holds").help("index lock holds measured")
                .labelNames("lock").callback(cb -> {
                    cb.call(current.get().index.applyLockHold().total(), "apply");
                    cb.call(current.get().index.lookupLockHold().total(), "lookup");
                }).register(registry);
        GaugeWithCallback.builder().name("orbitkv_index_budget_bytes_used").help("GlobalIndex bytes charged")
                .callback(cb -> cb.call(current.get().index.status().budgetBytesUsed())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_index_budget_bytes_peak").help("high-water mark of GlobalIndex bytes charged")
                .callback(cb -> cb.call(current.get().index.status().budgetBytesPeak())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_index_owners_not_installed").help("admitted owners without a current view")
                .callback(cb -> cb.call(current.get().index.status().ownersNotInstalled())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_session_source_limit_refused_members")
                .help("current members this source refuses with SESSION_LIMIT and has not served since (BND-3)")
                .callback(cb -> cb.call(current.get().sourceSessionsRefusedMembers().size())).register(registry);
        CounterWithCallback.builder().name("orbitkv_session_source_limit_refusal_episodes")
                .help("SESSION_LIMIT episodes of current members (each logged once; ends when served or gone)")
                .callback(cb -> {
                    Sessions cs = current.get().sessions;
                    cb.call(cs == null ? 0 : cs.server().sessionLimitRefusals().episodes());
                }).register(registry);
        GaugeWithCallback.builder().name("orbitkv_membership_members").help("admitted members in the current view")
                .callback(cb -> cb.call(current.get().membership.view().members().size())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_membership_lease_degraded")
                .help("1 while lease renewals fail or the incarnation is fenced, else 0")
                .callback(cb -> cb.call(current.get().membership.leaseStatus().degraded() ? 1 : 0)).register(registry);
        CounterWithCallback.builder().name("orbitkv_membership_lease_renewals_failed")
                .help("lease renewal calls that failed or timed out (each retried)")
                .callback(cb -> cb.call(current.get().membership.leaseStatus().failedRenewals())).register(registry);
        CounterWithCallback.builder().name("orbitkv_membership_records_refused")
                .help("member records never admitted, by reason (unleased, key_mismatch, malformed)")
                .labelNames("reason").callback(cb -> {
                    MemberRecordRefusals r = current.get().membership.refusedRecords();
                    cb.call(r.unleased(), "unleased");
                    cb.call(r.keyMismatch(), "key_mismatch");
                    cb.call(r.malformed(), "malformed");
                }).register(registry);
        GaugeWithCallback.builder().name("orbitkv_await_waiters").help("await requests waiting")
                .callback(cb -> cb.call(current.get().awaits.waiting())).register(registry);
        CounterWithCallback.builder().name("orbitkv_await_refused").help("await requests refused by the waiter bound or timed out")
                .labelNames("reason").callback(cb -> {
                    cb.call(current.get().awaits.refusedTooMany(), "too_many_waiters");
                    cb.call(current.get().awaits.timedOut(), "timeout");
                }).register(registry);
    }

    private static void lockHold(GaugeWithCallback.Callback cb, String lock, LockHoldSnapshot s) {
        cb.call(s.quantileUpperBoundNanos(0.5) / 1e9, lock, "0.5");
        cb.call(s.quantileUpperBoundNanos(0.99) / 1e9, lock, "0.99");
    }
}
