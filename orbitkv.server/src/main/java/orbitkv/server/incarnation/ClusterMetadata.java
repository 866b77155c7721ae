package orbitkv.server.incarnation;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import orbitkv.index.Coverage;
import orbitkv.index.GlobalIndex;
import orbitkv.index.KeyCandidates;
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
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.LeaseStatus;
import orbitkv.membership.Member;
import orbitkv.membership.MemberRecordRefusals;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipEvent;
import orbitkv.membership.MembershipView;
import orbitkv.server.transfer.PeerTransfer;
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
    /** The serving scope generation (scope + index) and the one bootstrapping beside it, if any (IDX-6). */
    private final ScopeGenerations scopes;
    private final InventorySource source;
    private final Incarnation self;
    private final ClusterIdentity cluster;
    private final AwaitSignals signals;
    /** Null in a Manager without session ends (tests of the metadata alone). */
    private final Sessions sessions;
    /** Null in a Manager without transfer ends (tests of the metadata alone). */
    private final PeerTransfer transfer;

    /**
     * The two session ends of this Manager (SES-1); their metric snapshots join one set of families, told apart by
     * the {@code side} label (DIAG-3).
     */
    public record Sessions(InventorySubscriber subscriber, InventorySessionServer server, int sessionsPerRequesterMax) {
        public Sessions {
            Objects.requireNonNull(subscriber, "subscriber");
            Objects.requireNonNull(server, "server");
        }
    }

    /**
     * One incarnation's metadata, built whole once its parts exist (issue 34 item 2): the session ends were created
     * over {@code signals.viewReceiver()}, the transfer ends over the same membership. Await asks the subscriber to
     * flush (API-5); status and metrics show both ends; peer restores use the engine.
     *
     * @param sessions the session ends, or null (no flush, no sessions section)
     * @param transfer the transfer ends, or null (no peer restores, no transfer section)
     */
    public ClusterMetadata(Membership membership, ScopeGenerations scopes, InventorySource source,
                           AwaitSignals signals, Sessions sessions, PeerTransfer transfer) {
        this.membership = Objects.requireNonNull(membership, "membership");
        this.scopes = Objects.requireNonNull(scopes, "scopes");
        this.source = Objects.requireNonNull(source, "source");
        this.signals = Objects.requireNonNull(signals, "signals");
        this.self = membership.incarnation();
        this.cluster = membership.cluster();
        this.sessions = sessions;
        this.transfer = transfer;
    }

    /**
     * The metadata alone, with its own await signals, no session ends and no transfer ends.
     *
     * @param waitersMax the await waiter bound (--await-waiters-max)
     */
    public ClusterMetadata(Membership membership, GlobalIndex index, InventorySource source, Scope scope, int waitersMax) {
        this(membership, index, source, scope, AwaitSignals.over(index, waitersMax));
    }

    private ClusterMetadata(Membership membership, GlobalIndex index, InventorySource source, Scope scope, AwaitSignals signals) {
        this(membership, new ScopeGenerations(membership.incarnation(), membership::view,
                new ScopeGenerations.Generation(1, scope, index), null, null, signals::receiverOver, signals::signal,
                orbitkv.membership.ProtocolClock.monotonicTimeOnly(), false), source, signals, null, null);
    }

    /** The membership of this incarnation. */
    public Membership membership() {
        return membership;
    }

    /** The requester GlobalIndex of the serving scope generation (IDX-6). */
    public GlobalIndex index() {
        return scopes.current().index();
    }

    /** The scope generations of this incarnation (IDX-6). */
    public ScopeGenerations scopes() {
        return scopes;
    }

    /**
     * IDX-6: starts a change of this incarnation's subscription scope; returns at once (a new generation bootstraps
     * beside the serving one and swaps when complete).
     *
     * @throws MetadataRefusal MEMBERSHIP_EXPIRED once fenced; SCOPE_CHANGE_PENDING while another change bootstraps
     */
    @Override
    public IncarnationStatus.ScopeChange changeScope(Scope scope, long timeoutMs) {
        requireNotFenced();
        return scopes.request(scope, timeoutMs);
    }

    /** The InventorySource this incarnation publishes. */
    public InventorySource source() {
        return source;
    }

    /** The await waiters and their install signal. */
    public AwaitSignals signals() {
        return signals;
    }

    /** The session ends, when wired. */
    public Optional<Sessions> sessions() {
        return Optional.ofNullable(sessions);
    }

    @Override
    public Optional<PeerTransfer> transfer() {
        return Optional.ofNullable(transfer);
    }

    /** The membership listener: index first (IDX-13), then waiters re-check (fence, removal). */
    public void onMembershipEvent(MembershipEvent event) {
        scopes.onIndexMembership(event.view());
        switch (event) {
            case MembershipEvent.Fenced f when f.cause() == MembershipEvent.FenceCause.SHUTDOWN ->
                    LOG.info("membership closed for shutdown: incarnation {}", f.fenced());
            case MembershipEvent.Fenced f -> LOG.warn("membership fenced: incarnation {} ({}); remote admission stopped, "
                    + "local cache service continues", f.fenced(), f.cause());
            case MembershipEvent.Suspended s -> LOG.warn("membership suspended: {}; remote admission stopped until re-read", s.cause());
            case MembershipEvent.Changed c -> LOG.info("membership view at revision {}: {} members",
                    c.view().revision(), c.view().members().size());
        }
        signals.signal();
    }

    private boolean remoteAdmission() {
        return !membership.fenced() && membership.view().valid();
    }

    @Override
    public Lookup lookup(Namespace namespace, List<StateKey> keys) {
        ScopeGenerations.Generation g = scopes.current(); // read once: one generation answers, never a mix (IDX-6)
        if (!remoteAdmission() || !g.scope().contains(namespace)) {
            return Lookup.none(Coverage.Unavailable, g.index().status().viewGeneration(), keys.size());
        }
        return switch (g.index().lookup(keys)) {
            case LookupOutcome.Candidates c -> leaseDegraded(candidates(c));
            case LookupOutcome.Refused r -> throw new MetadataRefusal(MetadataRefusal.Reason.TOO_MANY_KEYS, "the index refuses a lookup of "
                    + r.actual() + " " + r.field() + "; at most " + r.limit());
        };
    }

    /**
     * While lease renewals fail (etcd unreachable), membership may already be stale: no answer claims
     * CompleteAtWatermarks; candidates stay positive evidence (issue 20 item 6).
     */
    private Lookup leaseDegraded(Lookup l) {
        return l.coverage() == Coverage.CompleteAtWatermarks && membership.leaseStatus().degraded()
                ? new Lookup(Coverage.PartialHints, l.viewGeneration(), l.truncated(), l.replicas()) : l;
    }

    /** The coverage status reports: the index's, downgraded like {@link #leaseDegraded}; Unavailable without admission. */
    private Coverage reportedCoverage() {
        if (!remoteAdmission()) {
            return Coverage.Unavailable;
        }
        Coverage c = scopes.current().index().coverage();
        return c == Coverage.CompleteAtWatermarks && membership.leaseStatus().degraded() ? Coverage.PartialHints : c;
    }

    private IncarnationStatus.MembershipStatus membershipStatus(MembershipView view) {
        LeaseStatus lease = membership.leaseStatus();
        MemberRecordRefusals refused = membership.refusedRecords();
        return new IncarnationStatus.MembershipStatus(view.revision(), view.valid() && !membership.fenced(), view.members().size(),
                lease.state().name().toLowerCase(Locale.ROOT).replace('_', '-'), lease.failedRenewals(),
                new IncarnationStatus.RefusedRecords(refused.unleased(), refused.keyMismatch(), refused.malformed()));
    }

    private static Lookup candidates(LookupOutcome.Candidates c) {
        List<Boolean> truncated = new ArrayList<>(c.keys().size());
        List<List<orbitkv.index.Replica>> replicas = new ArrayList<>(c.keys().size());
        for (KeyCandidates k : c.keys()) {
            replicas.add(k.replicas());
            truncated.add(k.truncated());
        }
        return new Lookup(c.coverage(), c.viewGeneration(), truncated, replicas);
    }

    @Override
    public Optional<IncarnationStatus.Fence> fence() {
        requireNotFenced();
        InventoryFence f = InventoryFence.of(cluster, self, source.headSequence());
        return Optional.of(new IncarnationStatus.Fence(f.protocol(), f.clusterUuid().toString(), f.sourceNodeEpoch().value(),
                f.sourceIncarnation().toString(), f.inventorySequence()));
    }

    @Override
    public IncarnationStatus.AwaitResponse await(AwaitRequest request) throws InterruptedException {
        InventoryFence fence = request.fence();
        requireNotFenced();
        if (!fence.clusterUuid().equals(cluster.uuid())) {
            throw new MetadataRefusal(MetadataRefusal.Reason.CLUSTER_MISMATCH, "fence.cluster_uuid " + fence.clusterUuid()
                    + " is not this Manager's cluster " + cluster.name() + " (" + cluster.uuid() + ")");
        }
        requireScope(request.scopeDigest());
        Incarnation src = fence.sourceIncarnation();
        if (src.equals(self)) {
            return ownFence(fence);
        }
        requireAdmission();
        if (sessions != null) {
            sessions.subscriber().flushThrough(src, fence.inventorySequence()); // API-5; never blocks
        }
        return signals.registry().await(request.timeoutMs(), () -> probe(src, fence.inventorySequence(), request.scopeDigest()));
    }

    /** The serving generation of {@code digest} (IDX-6: a scope swap ends an await of the old digest with this refusal). */
    private ScopeGenerations.Generation requireScope(orbitkv.inventory.ScopeDigest digest) {
        ScopeGenerations.Generation g = scopes.current();
        if (!digest.equals(g.scope().digest())) {
            throw new MetadataRefusal(MetadataRefusal.Reason.SCOPE_DIGEST_MISMATCH, "scope_digest " + digest.hex()
                    + " is not this Manager's scope digest " + g.scope().digest().hex() + " (scope generation " + g.number() + ")");
        }
        return g;
    }

    /** This Manager's own fence: its tiers and source are authoritative locally; no view to wait for. */
    private IncarnationStatus.AwaitResponse ownFence(InventoryFence fence) {
        long head = source.headSequence();
        if (fence.inventorySequence() > head) {
            throw new MetadataRefusal(MetadataRefusal.Reason.INVALID_FIELD_VALUE, "fence.inventory_sequence " + fence.inventorySequence()
                    + " is beyond this incarnation's head sequence " + head);
        }
        return new IncarnationStatus.AwaitResponse(head, LOCAL_VIEW_ID);
    }

    private AwaitRegistry.Result<IncarnationStatus.AwaitResponse> probe(Incarnation src, long target,
            orbitkv.inventory.ScopeDigest digest) {
        requireNotFenced();
        requireAdmission();
        GlobalIndex index = requireScope(digest).index();
        MembershipView view = membership.view();
        if (!view.isAdmitted(src)) {
            Optional<Member> current = view.member(src.nodeId());
            if (current.isPresent() && current.get().incarnation().epoch().value() >= src.epoch().value()) {
                throw new MetadataRefusal(MetadataRefusal.Reason.OLD_INCARNATION, "fence.source_incarnation " + src
                        + " is not admitted: node " + src.nodeId().value() + " is now " + current.get().incarnation());
            }
            return new AwaitRegistry.Result.Pending<>(MetadataRefusal.Reason.NOT_ADMITTED, "fence.source_incarnation " + src
                    + " is not admitted by membership at revision " + view.revision());
        }
        Optional<InstalledCursor> cursor = index.installedCursor(src);
        if (cursor.isPresent() && cursor.get().watermark() >= target) {
            return new AwaitRegistry.Result.Ready<>(new IncarnationStatus.AwaitResponse(cursor.get().watermark(),
                    cursor.get().viewId().toString()));
        }
        return new AwaitRegistry.Result.Pending<>(MetadataRefusal.Reason.AWAIT_TIMEOUT, "no installed view of " + src
                + " applied through " + target + " within timeout_ms (installed: "
                + cursor.map(c -> c.viewId() + " at " + c.watermark()).orElse("none") + ")");
    }

    private void requireNotFenced() {
        if (membership.fenced()) {
            throw new MetadataRefusal(MetadataRefusal.Reason.MEMBERSHIP_EXPIRED, "this Manager's incarnation " + self
                    + " is fenced: no remote admission (local cache service continues)");
        }
    }

    private void requireAdmission() {
        if (!membership.view().valid()) {
            throw new MetadataRefusal(MetadataRefusal.Reason.METADATA_UNAVAILABLE,
                    "membership is suspended (watch gap or unreachable etcd): no remote admission until it is re-read");
        }
    }

    @Override
    public IncarnationStatus.StatusResponse status(int ownersLimit, String pageToken, long headSequence) {
        StatusPage page;
        try {
            page = scopes.current().index().ownerStatus(ownersLimit, Optional.ofNullable(pageToken));
        } catch (IllegalArgumentException e) {
            throw new MetadataRefusal(MetadataRefusal.Reason.INVALID_QUERY_PARAMETER, e.getMessage());
        }
        MembershipView view = membership.view();
        JournalStatus j = source.status();
        List<IncarnationStatus.OwnerStatus> owners = page.owners().stream().map(ClusterMetadata::ownerStatus).toList();
        return new IncarnationStatus.StatusResponse(ClusterIdentity.PROTOCOL, new IncarnationStatus.Cluster(cluster.name(), cluster.uuid().toString()),
                self(), scopes.view(),
                membershipStatus(view), reportedCoverage().name(),
                new IncarnationStatus.InventoryStatus(j.headSequence(), j.oldestRetainedSequence(), j.journalBytes(),
                        j.journalPeakBytes(), new IncarnationStatus.Stamp(j.lastPublication().sequence(), j.lastPublication().monoNanos())),
                owners, page.nextPageToken().orElse(null), sessionsStatus(), transferStatus());
    }

    private IncarnationStatus.TransferStatus transferStatus() {
        PeerTransfer t = transfer;
        return t == null ? null : TransferStatusView.of(t);
    }

    private IncarnationStatus.SessionsStatus sessionsStatus() {
        Sessions s = sessions;
        if (s == null) {
            return null;
        }
        SubscriptionStatus st = s.subscriber().status();
        List<IncarnationStatus.RequesterSession> requester = st.sessions().stream().map(p -> new IncarnationStatus.RequesterSession(
                owner(p.source()), p.state().name(), p.connects(), p.installs(), p.lastErrorCause())).toList();
        List<IncarnationStatus.ServedSession> served = s.server().status().stream().map(p -> new IncarnationStatus.ServedSession(
                owner(p.requester()), p.sessionId().toString(), p.phase().name(), p.cursor(), p.lastFrame(),
                p.outstandingBytes(), p.peakOutstandingBytes(), p.snapshotAttempts(), p.snapshotAborts())).toList();
        return new IncarnationStatus.SessionsStatus(st.admittedSources(), s.sessionsPerRequesterMax(), !st.capacityIncomplete(),
                st.beyondLimit().stream().map(Incarnation::toString).toList(), requester, served,
                sourceSessionsRefusedMembers(), s.server().sessionLimitRefusals().episodes());
    }

    private static IncarnationStatus.OwnerStatus ownerStatus(OwnerViewStatus o) {
        return new IncarnationStatus.OwnerStatus(owner(o.owner()), o.state().name(), o.viewId().map(UUID::toString).orElse(null),
                o.watermark(), o.sourceHead(), o.receiptAgeMs(), o.rows(), o.bytes(),
                new IncarnationStatus.Stamp(o.installedSequence() < 0 ? null : o.installedSequence(),
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
    public IncarnationStatus.Owner self() {
        return owner(self);
    }

    static IncarnationStatus.Owner owner(Incarnation i) {
        return IncarnationStatus.Owner.of(i);
    }
}
