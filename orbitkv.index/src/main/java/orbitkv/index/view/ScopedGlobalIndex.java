package orbitkv.index.view;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import orbitkv.index.Coverage;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.index.IndexStatus;
import orbitkv.index.KeyCandidates;
import orbitkv.index.LockHoldSnapshot;
import orbitkv.index.LookupOutcome;
import orbitkv.index.OwnerState;
import orbitkv.index.OwnerViewStatus;
import orbitkv.index.Replica;
import orbitkv.index.StatusPage;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.Interval;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.Medium;
import orbitkv.inventory.RejectReason;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.Scope;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The GlobalIndex: one {@link OwnerView} partition per admitted remote incarnation, an incrementally
 * maintained {@link CoverageTracker}, one {@link IndexBudget}, and bounded asynchronous cleanup of
 * removed owners (DESIGN §6; IDX-1, IDX-7..IDX-13, SNAP-11, SNAP-12).
 */
public final class ScopedGlobalIndex implements GlobalIndex {
    private static final Logger LOG = LoggerFactory.getLogger(ScopedGlobalIndex.class);
    private static final Comparator<Incarnation> OWNER_ORDER = Comparator.comparing(Incarnation::nodeId)
            .thenComparing(Incarnation::epoch).thenComparing(Incarnation::id);
    private static final OwnerView[] NO_OWNERS = new OwnerView[0];

    private final Incarnation self;
    private final IndexContext ctx;
    private final Executor cleanupExecutor;
    private final ConcurrentHashMap<Incarnation, OwnerView> owners = new ConcurrentHashMap<>();
    /** Sorted by owner; the lookup path iterates this array and checks {@link OwnerView#excluded()}. */
    private volatile OwnerView[] ownerArray = NO_OWNERS;
    private volatile MembershipView membership;
    private final Object membershipLock = new Object();
    /** Set once by {@link #retire()} under {@link #membershipLock}: no owner is admitted again. */
    private boolean generationRetired;
    /** Bounded by the number of removed owners still holding rows; each is queued once. */
    private final ArrayDeque<RetiredRows> retired = new ArrayDeque<>();
    private final AtomicLong cleanupPendingRows = new AtomicLong();

    public ScopedGlobalIndex(Incarnation self, Scope scope, IndexConfig config, LongSupplier monoNanos,
            Executor cleanupExecutor) {
        this.self = Objects.requireNonNull(self, "self incarnation must not be null");
        Objects.requireNonNull(scope, "scope must not be null");
        Objects.requireNonNull(config, "index config must not be null");
        config.validate();
        Objects.requireNonNull(monoNanos, "monotonic clock must not be null");
        this.cleanupExecutor = Objects.requireNonNull(cleanupExecutor, "cleanup executor must not be null");
        this.ctx = new IndexContext(scope, scope.digest(), config, new IndexBudget(config.indexBytesMax()),
                new NamespaceTable(), new CoverageTracker(config.freshnessBudgetMs() * 1_000_000), monoNanos,
                new LockHoldHistogram(), new LockHoldHistogram(), new AtomicLong());
    }

    /**
     * IDX-6: the next scope generation beside {@code previous}: same requester, settings, clock and cleanup executor;
     * ONE byte budget (both generations' rows are charged together, so a scope change never holds two budgets,
     * SNAP-12, BND-1), the same lock-hold histograms and withdrawal count, and the same view generation counter;
     * its own namespace ids, coverage and owner views, all empty: it answers nothing until its owners install.
     */
    private ScopedGlobalIndex(ScopedGlobalIndex previous, Scope scope) {
        this.self = previous.self;
        this.cleanupExecutor = previous.cleanupExecutor;
        IndexContext p = previous.ctx;
        this.ctx = new IndexContext(Objects.requireNonNull(scope, "scope must not be null"), scope.digest(), p.config(),
                p.budget(), new NamespaceTable(), new CoverageTracker(p.config().freshnessBudgetMs() * 1_000_000,
                        p.coverage().generationCounter()), p.monoNanos(), p.applyHold(), p.lookupHold(), p.viewsWithdrawn());
    }

    /** {@link GlobalIndex#nextGeneration}: {@code previous} must be an index of this implementation. */
    public static GlobalIndex nextGeneration(GlobalIndex previous, Scope scope) {
        if (!(previous instanceof ScopedGlobalIndex p)) {
            throw new IllegalArgumentException("the next scope generation needs an index made by GlobalIndex.create, got "
                    + (previous == null ? "null" : previous.getClass().getName()));
        }
        return new ScopedGlobalIndex(p, scope);
    }

    @Override
    public Scope scope() {
        return ctx.scope();
    }

    /**
     * IDX-6, IDX-1: this generation stops serving for good: every owner is excluded at once (O(1) per owner on the
     * lookup path), its rows go to the bounded asynchronous cleanup that returns their bytes to the shared budget,
     * later membership views admit nobody, coverage is Unavailable. Idempotent.
     */
    @Override
    public void retire() {
        synchronized (membershipLock) {
            if (generationRetired) {
                return;
            }
            generationRetired = true;
            for (OwnerView o : owners.values()) {
                remove(o);
            }
            ownerArray = NO_OWNERS;
            ctx.coverage().membership(false);
        }
    }

    // ---------------------------------------------------------------- membership (IDX-2, IDX-13)

    @Override
    public void onMembership(MembershipView view) {
        Objects.requireNonNull(view, "membership view must not be null");
        synchronized (membershipLock) {
            if (generationRetired) {
                return; // a retired scope generation admits nobody (IDX-6)
            }
            membership = view;
            if (view.valid()) {
                for (Member m : view.members()) {
                    Incarnation inc = m.incarnation();
                    // a requester-only member serves no inventory: no owner view, no coverage wait (MEM-11)
                    if (m.serves() && !inc.equals(self) && !owners.containsKey(inc)) {
                        OwnerView o = new OwnerView(inc, ctx);
                        owners.put(inc, o);
                        ctx.coverage().admit(o);
                    }
                }
                for (OwnerView o : owners.values()) {
                    if (!view.isAdmitted(o.owner)) {
                        remove(o);
                    }
                }
                OwnerView[] arr = owners.values().toArray(NO_OWNERS);
                Arrays.sort(arr, (x, y) -> OWNER_ORDER.compare(x.owner, y.owner));
                ownerArray = arr;
            }
            // A suspended view (watch gap) keeps owner views: remote admission stops (MEM-9) and lookups
            // report Unavailable, but nothing is torn down until a valid view no longer admits an owner.
            ctx.coverage().membership(view.valid());
        }
    }

    private void remove(OwnerView o) {
        owners.remove(o.owner);
        RetiredRows rows = o.exclude();
        LOG.info("owner {} left membership; excluded, {} rows queued for cleanup", o.owner,
                rows == null ? 0 : rows.rowsRemaining());
        if (rows != null && rows.rowsRemaining() >= 0) {
            synchronized (retired) {
                retired.add(rows);
                cleanupPendingRows.addAndGet(rows.rowsRemaining());
            }
            cleanupExecutor.execute(this::cleanupBatch);
        }
    }

    /** One bounded cleanup batch (IDX-1); re-submits itself while rows remain, yielding between batches. */
    private void cleanupBatch() {
        boolean more;
        synchronized (retired) {
            RetiredRows r = retired.peek();
            if (r == null) {
                return;
            }
            long[] freed = r.freeBatch(ctx.config().cleanupBatchRowsMax());
            cleanupPendingRows.addAndGet(-freed[0]);
            ctx.budget().release(freed[1]);
            if (r.rowsRemaining() == 0) {
                retired.poll();
            }
            more = !retired.isEmpty();
        }
        if (more) {
            cleanupExecutor.execute(this::cleanupBatch);
        }
    }

    // ---------------------------------------------------------------- receiver SPI

    /** The owner view of an admitted source, or the refusal (SES-5). */
    private Object resolve(Incarnation source) {
        Objects.requireNonNull(source, "source incarnation must not be null");
        MembershipView m = membership;
        if (m == null || !m.valid()) {
            return RejectReason.MEMBERSHIP_SUSPENDED;
        }
        OwnerView o = owners.get(source);
        if (o == null || !m.isAdmitted(source)) {
            return RejectReason.UNKNOWN_SOURCE_INCARNATION;
        }
        return o;
    }

    @Override
    public StageOutcome beginStaging(Incarnation source, UUID viewId, ScopeDigest scopeDigest, long s0, long frameNumber) {
        Objects.requireNonNull(viewId, "view id must not be null");
        Objects.requireNonNull(scopeDigest, "scope digest must not be null");
        requireNonNegative("s0", s0);
        requirePositive("frameNumber", frameNumber);
        Object o = resolve(source);
        return o instanceof OwnerView v ? v.beginStaging(viewId, scopeDigest, s0, frameNumber)
                : new StageOutcome.Rejected((RejectReason) o);
    }

    @Override
    public StageOutcome stagePage(Incarnation source, UUID viewId, long pageOrdinal, long frameNumber,
            RecordBatch records) {
        Objects.requireNonNull(viewId, "view id must not be null");
        Objects.requireNonNull(records, "records must not be null");
        requirePositive("pageOrdinal", pageOrdinal);
        requirePositive("frameNumber", frameNumber);
        Object o = resolve(source);
        if (!(o instanceof OwnerView v)) {
            return new StageOutcome.Rejected((RejectReason) o);
        }
        PreparedFrame frame = PreparedFrame.page(records, ctx.scope(), ctx.namespaces());
        return v.stagePage(viewId, pageOrdinal, frameNumber, frame, records);
    }

    @Override
    public DeltaOutcome applyDelta(Incarnation source, UUID viewId, long frameNumber, Interval interval,
            RecordBatch records) {
        Objects.requireNonNull(viewId, "view id must not be null");
        Objects.requireNonNull(interval, "interval must not be null");
        Objects.requireNonNull(records, "records must not be null");
        requirePositive("frameNumber", frameNumber);
        Object o = resolve(source);
        if (!(o instanceof OwnerView v)) {
            return new DeltaOutcome.Rejected((RejectReason) o);
        }
        // Decoded and validated before any index lock (DELTA-4).
        PreparedFrame frame = PreparedFrame.delta(interval, records, ctx.scope(), ctx.namespaces());
        return v.applyDelta(viewId, frameNumber, interval, frame, records);
    }

    @Override
    public CommitOutcome commit(Incarnation source, UUID viewId, CommitMarker marker) {
        Objects.requireNonNull(viewId, "view id must not be null");
        Objects.requireNonNull(marker, "commit marker must not be null");
        Object o = resolve(source);
        return o instanceof OwnerView v ? v.commit(viewId, marker) : new CommitOutcome.Rejected((RejectReason) o);
    }

    @Override
    public void discardStaging(Incarnation source, ResetCause cause) {
        Objects.requireNonNull(cause, "reset cause must not be null");
        OwnerView o = owners.get(Objects.requireNonNull(source, "source incarnation must not be null"));
        if (o != null) {
            o.discardStaging(cause);
        }
    }

    @Override
    public Optional<InstalledCursor> installedCursor(Incarnation source) {
        OwnerView o = owners.get(Objects.requireNonNull(source, "source incarnation must not be null"));
        return o == null ? Optional.empty() : o.installedCursor();
    }

    @Override
    public void observeLiveness(Incarnation source, long sourceHead) {
        OwnerView o = owners.get(Objects.requireNonNull(source, "source incarnation must not be null"));
        if (o != null && !o.excluded()) {
            o.observeLiveness(sourceHead);
        }
    }

    // ---------------------------------------------------------------- lookup (IDX-7..IDX-10, SNAP-11)

    @Override
    public LookupOutcome lookup(List<StateKey> keys) {
        Objects.requireNonNull(keys, "lookup keys must not be null");
        IndexConfig cfg = ctx.config();
        if (keys.size() > cfg.lookupKeysMax()) {
            return new LookupOutcome.Refused("keys", cfg.lookupKeysMax(), keys.size());
        }
        long bytes = 0;
        boolean outOfScope = false;
        for (StateKey k : keys) {
            bytes += k.namespace().length() + k.keyLength();
            outOfScope |= !ctx.scope().contains(k.namespace());
        }
        if (bytes > cfg.lookupBytesMax()) {
            return new LookupOutcome.Refused("bytes", cfg.lookupBytesMax(), bytes);
        }
        CoverageTracker.State c = ctx.coverage().current();
        long now = ctx.monoNanos().getAsLong();
        Coverage coverage = coverageOf(c, now, outOfScope);
        int n = keys.size();
        CandidateCollector[] found = new CandidateCollector[n];
        if (c.membershipValid()) {
            probeOwners(keys, found, now);
        }
        List<KeyCandidates> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(found[i] == null ? new KeyCandidates(keys.get(i), List.of(), false) : found[i].finish(keys.get(i)));
        }
        return new LookupOutcome.Candidates(coverage, c.viewGeneration(), out);
    }

    private static Coverage coverageOf(CoverageTracker.State c, long now, boolean outOfScope) {
        if (!c.membershipValid() || outOfScope) {
            return Coverage.Unavailable;
        }
        if (c.notInstalled() > 0 || now - c.freshUntilNanos() > 0) {
            return Coverage.PartialHints;
        }
        return Coverage.CompleteAtWatermarks;
    }

    private void probeOwners(List<StateKey> keys, CandidateCollector[] found, long now) {
        int n = keys.size();
        byte[][] keyBytes = new byte[n][];
        int[] tags = new int[2 * n];
        int[] hashes = new int[2 * n];
        boolean[] inScope = new boolean[n];
        for (int i = 0; i < n; i++) {
            inScope[i] = ctx.scope().contains(keys.get(i).namespace());
            resolve(keys.get(i), i, keyBytes, tags, hashes);
        }
        long budgetNanos = ctx.config().freshnessBudgetMs() * 1_000_000;
        Medium[] media = Medium.values();
        for (OwnerView o : ownerArray) {
            if (o.excluded()) {
                continue; // O(1) exclusion of a removed incarnation (IDX-1, IDX-13)
            }
            boolean stale = o.state() == OwnerState.REPAIRING || now - o.lastReceiptNanos() > budgetNanos;
            long t0 = ctx.monoNanos().getAsLong();
            o.readLock().lock();
            try {
                ResidenceTable t = o.installedTableUnderReadLock();
                if (t == null || t.size() == 0) {
                    continue;
                }
                for (int i = 0; i < n; i++) {
                    if (keyBytes[i] == null) {
                        // A namespace is interned before any row of it is applied under this lock, so an
                        // id that was unknown before the lock may be known now: resolve again, or this
                        // lookup could see part of a frame's namespaces (DELTA-2).
                        if (!inScope[i] || !resolve(keys.get(i), i, keyBytes, tags, hashes)) {
                            continue;
                        }
                    }
                    for (int m = 0; m < 2; m++) {
                        int slot = t.find(tags[2 * i + m], keyBytes[i], hashes[2 * i + m]);
                        if (slot >= 0) {
                            if (found[i] == null) {
                                found[i] = new CandidateCollector(ctx.config().replicasPerMediumMax());
                            }
                            found[i].offer(o.owner, media[m], t.sequenceAt(slot), t.sizeAt(slot), stale);
                        }
                    }
                }
            } finally {
                o.readLock().unlock();
                ctx.lookupHold().record(ctx.monoNanos().getAsLong() - t0);
            }
        }
    }

    /** Fills the row-form probe of key {@code i}; false while its namespace has no id (no rows anywhere). */
    private boolean resolve(StateKey k, int i, byte[][] keyBytes, int[] tags, int[] hashes) {
        int ns = ctx.scope().contains(k.namespace()) ? ctx.namespaces().find(k.namespace()) : -1;
        if (ns < 0) {
            return false;
        }
        keyBytes[i] = k.key();
        for (int m = 0; m < 2; m++) {
            tags[2 * i + m] = ResidenceTable.tag(ns, m);
            hashes[2 * i + m] = ResidenceTable.hash(tags[2 * i + m], keyBytes[i]);
        }
        return true;
    }

    /**
     * IDX-9: keeps at most {@code perMedium} fresh and {@code perMedium} stale replicas per medium while
     * owners are probed in owner order, so a hot key held by every owner costs a bounded number of
     * objects; {@link #finish} returns fresh before stale, at most {@code perMedium} per medium, and flags
     * anything left out (a truncated list is still positive evidence).
     */
    static final class CandidateCollector {
        private final int perMedium;
        private final List<Replica> kept = new ArrayList<>(4);
        private final int[] fresh = new int[2];
        private final int[] stale = new int[2];
        private boolean truncated;

        CandidateCollector(int perMedium) {
            this.perMedium = perMedium;
        }

        void offer(Incarnation owner, Medium medium, long sequence, long sizeBytes, boolean isStale) {
            int[] counts = isStale ? stale : fresh;
            if (counts[medium.ordinal()] < perMedium) {
                counts[medium.ordinal()]++;
                kept.add(new Replica(owner, medium, sequence, sizeBytes, isStale));
            } else {
                truncated = true;
            }
        }

        KeyCandidates finish(StateKey key) {
            kept.sort(Comparator.comparing(Replica::stale).thenComparing(Replica::medium)); // stable: owner order
            List<Replica> out = new ArrayList<>(kept.size());
            int[] taken = new int[2];
            boolean cut = truncated;
            for (Replica r : kept) {
                if (taken[r.medium().ordinal()]++ < perMedium) {
                    out.add(r);
                } else {
                    cut = true;
                }
            }
            return new KeyCandidates(key, out, cut);
        }
    }

    @Override
    public Coverage coverage() {
        return coverageOf(ctx.coverage().current(), ctx.monoNanos().getAsLong(), false);
    }

    // ---------------------------------------------------------------- diagnostics (DIAG-1, IDX-8)

    @Override
    public IndexStatus status() {
        CoverageTracker.State c = ctx.coverage().current();
        MembershipView m = membership;
        return new IndexStatus(coverage(), c.viewGeneration(), m == null ? 0 : m.revision(), c.membershipValid(),
                owners.size(), c.notInstalled(), ctx.budget().bytesUsed(), ctx.budget().bytesMax(),
                cleanupPendingRows.get(), ctx.viewsWithdrawn().get(), ctx.budget().bytesPeak());
    }

    @Override
    public StatusPage ownerStatus(int limit, Optional<String> pageToken) {
        int max = ctx.config().diagnosticsPageSizeMax();
        if (limit < 1 || limit > max) {
            throw new IllegalArgumentException("owners limit must be 1.." + max + ", got " + limit);
        }
        Objects.requireNonNull(pageToken, "page token must not be null (use Optional.empty())");
        Incarnation after = null;
        if (pageToken.isPresent()) {
            try {
                after = Incarnation.parse(pageToken.get());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("owners page token is malformed: " + e.getMessage());
            }
        }
        OwnerView[] arr = ownerArray;
        long now = ctx.monoNanos().getAsLong();
        List<OwnerViewStatus> page = new ArrayList<>(Math.min(limit, arr.length));
        int i = 0;
        while (i < arr.length && after != null && OWNER_ORDER.compare(arr[i].owner, after) <= 0) {
            i++;
        }
        for (; i < arr.length && page.size() < limit; i++) {
            if (!arr[i].excluded()) {
                page.add(arr[i].status(now));
            }
        }
        Optional<String> next = i < arr.length && !page.isEmpty()
                ? Optional.of(page.getLast().owner().toString()) : Optional.empty();
        return new StatusPage(page, next);
    }

    @Override
    public LockHoldSnapshot applyLockHold() {
        return ctx.applyHold().snapshot();
    }

    @Override
    public LockHoldSnapshot lookupLockHold() {
        return ctx.lookupHold().snapshot();
    }

    private static void requireNonNegative(String field, long v) {
        if (v < 0) {
            throw new IllegalArgumentException(field + " must be >= 0, got " + v);
        }
    }

    private static void requirePositive(String field, long v) {
        if (v < 1) {
            throw new IllegalArgumentException(field + " must be >= 1, got " + v);
        }
    }
}
