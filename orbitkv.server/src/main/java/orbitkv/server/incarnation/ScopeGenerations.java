package orbitkv.server.incarnation;

import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import orbitkv.index.GlobalIndex;
import orbitkv.inventory.InventorySubscriber;
import orbitkv.inventory.RequesterSessionMetrics;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SubscriptionStatus;
import orbitkv.inventory.ViewReceiver;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipView;
import orbitkv.membership.ProtocolClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * IDX-6 (issue 40 item 4): the scope generations of one incarnation's requester side. The serving generation (its
 * number, scope and GlobalIndex) answers every query; a requested scope change builds the next generation beside it
 * ({@link GlobalIndex#nextGeneration}: one shared byte budget) with its own subscriber, whose sessions bootstrap the
 * new scope digest, and swaps it in with one volatile write once it has an installed view of every admitted member the
 * serving generation has one of. A query reads one generation, never a mix: until the swap it answers from the old
 * views (coverage reported honestly: the old views age past the freshness budget while the sources serve the new
 * sessions), after it from the new ones. A generation that does not complete before its deadline, or is overtaken by a
 * fence or shutdown, is abandoned: it is retired and the serving generation resumes its sessions from its installed
 * views (SNAP-8). At most one generation is pending; a second request is refused with {@code SCOPE_CHANGE_PENDING}
 * and counted.
 *
 * <p>SES-2 allows one session per requester and source, so the serving generation's subscriber is closed while the
 * next one bootstraps (a source would otherwise replace one session by the other, SES-6). Nothing here waits on etcd or
 * a peer: a request starts the change and returns (IDX-6); the completion check and the deadline run on the protocol
 * clock's timer every {@link #POLL_NANOS}.
 */
public final class ScopeGenerations {
    private static final Logger LOG = LoggerFactory.getLogger(ScopeGenerations.class);
    /** How often a pending generation is checked for completion and deadline. */
    static final long POLL_NANOS = 20_000_000L;

    /** Opens the requester sessions of one scope into one receiver (the Manager's {@code InventorySubscriber.create}). */
    @FunctionalInterface
    public interface Subscribers {
        InventorySubscriber open(Scope scope, ViewReceiver receiver);
    }

    /** One scope generation: its number (1 at start), scope and index. */
    public record Generation(long number, Scope scope, GlobalIndex index) {
        public Generation {
            Objects.requireNonNull(scope, "scope");
            Objects.requireNonNull(index, "index");
        }
    }

    private record Pending(Generation generation, InventorySubscriber subscriber, long startedNanos, long deadlineNanos) {}

    private final Incarnation self;
    private final Supplier<MembershipView> membership;
    private final Function<GlobalIndex, ViewReceiver> receivers;
    /** Null when this incarnation runs no sessions (the metadata alone, in tests). */
    private final Subscribers subscribers;
    private final Runnable swapped;
    private final ProtocolClock clock;
    private final boolean autoPoll;
    private volatile Generation current;
    /** The subscriber whose sessions run now: the pending generation's while one is pending, else the serving one's. */
    private volatile InventorySubscriber live;
    /** The last subscriber that ran sessions (its figures after a stop); null only without sessions. */
    private volatile InventorySubscriber lastLive;
    /** Guarded by this, as are the counters, {@link #lastOutcome} and {@link #stopped}. */
    private Pending pending;
    private long swaps;
    private long abandons;
    private long refusedPending;
    private String lastOutcome;
    private boolean stopped;

    /**
     * @param first the generation serving at start (number 1)
     * @param firstSubscriber its running subscriber, or null without sessions
     * @param subscribers opens the sessions of a later generation, or null without sessions
     * @param receivers the receiver a generation's sessions apply into (its index, waking await waiters)
     * @param swapped runs after each swap (wakes await waiters to re-check their scope digest)
     * @param autoPoll whether {@code clock} arms the completion checks (false: the caller calls {@link #poll()})
     */
    public ScopeGenerations(Incarnation self, Supplier<MembershipView> membership, Generation first,
                            InventorySubscriber firstSubscriber, Subscribers subscribers,
                            Function<GlobalIndex, ViewReceiver> receivers, Runnable swapped, ProtocolClock clock,
                            boolean autoPoll) {
        this.self = Objects.requireNonNull(self, "self");
        this.membership = Objects.requireNonNull(membership, "membership");
        this.current = Objects.requireNonNull(first, "first");
        this.live = firstSubscriber;
        this.lastLive = firstSubscriber;
        this.subscribers = subscribers;
        this.receivers = Objects.requireNonNull(receivers, "receivers");
        this.swapped = Objects.requireNonNull(swapped, "swapped");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.autoPoll = autoPoll;
    }

    /**
     * The scope generations of a Manager incarnation: generation 1 of {@code scope} over {@code index}, whose sessions
     * {@code first} runs into {@code signals.viewReceiver()}; later generations' sessions are opened by {@code open}
     * into receivers that wake the same await waiters; completion is checked on {@code clock}'s timer.
     */
    public static ScopeGenerations wired(Incarnation self, Supplier<MembershipView> membership, Scope scope,
                                         GlobalIndex index, InventorySubscriber first, Subscribers open,
                                         AwaitSignals signals, ProtocolClock clock) {
        return new ScopeGenerations(self, membership, new Generation(1, scope, index), Objects.requireNonNull(first, "first"),
                Objects.requireNonNull(open, "open"), signals::receiverOver, signals::signal, clock, true);
    }

    /** The generation serving now: read once per query, so a query never mixes two generations. */
    public Generation current() {
        return current;
    }

    /** The generation bootstrapping beside the serving one, if any. */
    public synchronized java.util.Optional<Generation> pending() {
        return java.util.Optional.ofNullable(pending).map(Pending::generation);
    }

    /**
     * Starts a change to {@code scope}; returns at once (IDX-6: nothing waits on a peer).
     *
     * @throws MetadataRefusal SCOPE_CHANGE_PENDING while another change bootstraps; MEMBERSHIP_EXPIRED once stopped
     */
    public synchronized IncarnationStatus.ScopeChange request(Scope scope, long timeoutMs) {
        Objects.requireNonNull(scope, "scope");
        if (timeoutMs < 1) {
            throw new IllegalArgumentException("timeout_ms must be >= 1, got " + timeoutMs);
        }
        if (stopped) {
            throw new MetadataRefusal(MetadataRefusal.Reason.MEMBERSHIP_EXPIRED, "this incarnation is fenced or shutting down: "
                    + "its scope no longer changes");
        }
        if (pending != null) {
            refusedPending++;
            Generation p = pending.generation();
            throw new MetadataRefusal(MetadataRefusal.Reason.SCOPE_CHANGE_PENDING, "scope generation " + p.number() + " ("
                    + p.scope().digest().hex() + ") is still bootstrapping beside generation " + current.number()
                    + "; one change at a time: retry once it swapped or was abandoned (within "
                    + Math.max(0, (pending.deadlineNanos() - clock.nanoTime()) / 1_000_000) + " ms)");
        }
        Generation serving = current;
        if (serving.scope().digest().equals(scope.digest())) {
            return new IncarnationStatus.ScopeChange(serving.number(), scope.digest().hex(), "current");
        }
        GlobalIndex index = GlobalIndex.nextGeneration(serving.index(), scope);
        MembershipView view = membership.get();
        index.onMembership(view);
        Generation next = new Generation(serving.number() + 1, scope, index);
        InventorySubscriber subscriber = null;
        if (subscribers != null) {
            closeLive(); // SES-2: one session per source; the serving views stay installed and keep answering
            subscriber = subscribers.open(scope, receivers.apply(index));
            live = subscriber;
            lastLive = subscriber;
            subscriber.onMembership(view);
        }
        long now = clock.nanoTime();
        pending = new Pending(next, subscriber, now, now + timeoutMs * 1_000_000);
        LOG.info("scope generation {} ({}) bootstrapping beside generation {} ({}); deadline {} ms", next.number(),
                scope.digest().hex(), serving.number(), serving.scope().digest().hex(), timeoutMs);
        schedulePoll();
        return new IncarnationStatus.ScopeChange(next.number(), scope.digest().hex(), "bootstrapping");
    }

    private void closeLive() {
        InventorySubscriber s = live;
        if (s != null) {
            s.close();
        }
    }

    private void schedulePoll() {
        if (autoPoll) {
            clock.schedule(this::poll, POLL_NANOS);
        }
    }

    /** Swaps a complete pending generation in, or abandons one past its deadline; else checks again later. */
    public void poll() {
        synchronized (this) {
            Pending p = pending;
            if (p == null || stopped) {
                return;
            }
            if (complete(p.generation().index())) {
                swap(p);
                return;
            }
            if (clock.nanoTime() - p.deadlineNanos() >= 0) {
                abandon("timeout: no installed view of every member the serving generation has one of within the deadline");
                return;
            }
        }
        schedulePoll();
    }

    /** Every admitted serving member installed in the serving generation is installed in {@code next}. */
    private boolean complete(GlobalIndex next) {
        MembershipView view = membership.get();
        if (!view.valid()) {
            return false;
        }
        GlobalIndex serving = current.index();
        for (Member m : view.members()) {
            Incarnation inc = m.incarnation();
            if (m.serves() && !inc.equals(self) && view.isAdmitted(inc) && serving.installedCursor(inc).isPresent()
                    && next.installedCursor(inc).isEmpty()) {
                return false;
            }
        }
        return true;
    }

    private void swap(Pending p) {
        Generation old = current;
        p.generation().index().onMembership(membership.get()); // publishes: its view generation passes the old one's
        current = p.generation();
        pending = null;
        swaps++;
        lastOutcome = "swapped";
        old.index().retire();
        LOG.info("scope generation {} ({}) serves; generation {} retired after {} ms", p.generation().number(),
                p.generation().scope().digest().hex(), old.number(), (clock.nanoTime() - p.startedNanos()) / 1_000_000);
        swapped.run();
    }

    /** Under this monitor: retires the pending generation; the serving one resumes its sessions. */
    private void abandon(String cause) {
        Pending p = pending;
        pending = null;
        abandons++;
        lastOutcome = "abandoned: " + cause;
        if (p.subscriber() != null) {
            p.subscriber().close();
            live = null;
            if (!stopped) {
                Generation serving = current;
                InventorySubscriber resumed = subscribers.open(serving.scope(), receivers.apply(serving.index()));
                live = resumed;
                lastLive = resumed;
                resumed.onMembership(membership.get());
            }
        }
        p.generation().index().retire();
        LOG.warn("scope generation {} ({}) abandoned ({}); generation {} keeps serving", p.generation().number(),
                p.generation().scope().digest().hex(), cause, current.number());
    }

    /** A membership view for every index (IDX-13), before the sessions see it. */
    public synchronized void onIndexMembership(MembershipView view) {
        current.index().onMembership(view);
        if (pending != null) {
            pending.generation().index().onMembership(view);
        }
    }

    /** The {@code scope} section of status. */
    public synchronized IncarnationStatus.ScopeView view() {
        Generation g = current;
        IncarnationStatus.PendingScope p = null;
        if (pending != null) {
            long now = clock.nanoTime();
            Generation n = pending.generation();
            p = new IncarnationStatus.PendingScope(n.number(), n.scope().digest().hex(), ClusterMetadata.namespaces(n.scope()),
                    (now - pending.startedNanos()) / 1_000_000, Math.max(0, (pending.deadlineNanos() - now) / 1_000_000));
        }
        return new IncarnationStatus.ScopeView(g.scope().digest().hex(), g.number(), ClusterMetadata.namespaces(g.scope()), p,
                new IncarnationStatus.ScopeChanges(swaps, abandons, refusedPending, lastOutcome));
    }

    /** The live subscriber as one {@link InventorySubscriber} for the session wiring, status and metrics. */
    public InventorySubscriber subscriber() {
        Objects.requireNonNull(lastLive, "no sessions were wired");
        return new LiveSubscriber();
    }

    private void stop(boolean fence) {
        synchronized (this) {
            if (stopped) {
                return;
            }
            stopped = true;
            if (pending != null) {
                abandon(fence ? "fenced" : "shutdown");
            }
            InventorySubscriber s = live;
            if (s != null) {
                if (fence) {
                    s.fence();
                } else {
                    s.close();
                }
            }
        }
    }

    /**
     * The subscriber of whichever generation's sessions run now. Its figures restart with each change of scope
     * (a Prometheus counter reset); membership goes to the live sessions under this object's monitor, so a change
     * never misses a view.
     */
    private final class LiveSubscriber implements InventorySubscriber {
        @Override
        public void onMembership(MembershipView view) {
            synchronized (ScopeGenerations.this) {
                InventorySubscriber s = live;
                if (s != null && !stopped) {
                    s.onMembership(view);
                }
            }
        }

        @Override
        public boolean flushThrough(Incarnation source, long targetSequence) {
            InventorySubscriber s = live;
            return s != null && s.flushThrough(source, targetSequence);
        }

        @Override
        public SubscriptionStatus status() {
            InventorySubscriber s = live;
            return s != null ? s.status() : new SubscriptionStatus(0, java.util.List.of(), java.util.List.of());
        }

        @Override
        public void fence() {
            stop(true);
        }

        @Override
        public RequesterSessionMetrics metrics() {
            InventorySubscriber s = live;
            return (s != null ? s : Objects.requireNonNull(lastLive, "no sessions were wired")).metrics();
        }

        @Override
        public void close() {
            stop(false);
        }
    }
}
