package orbitkv.inventory.session;

import io.grpc.ManagedChannel;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import orbitkv.inventory.InventorySubscriber;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.RequesterSessionMetrics;
import orbitkv.inventory.SubscriptionStatus;
import orbitkv.inventory.ViewReceiver;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipView;
import orbitkv.membership.ProtocolClock;

/**
 * The requester's sessions, one per admitted source incarnation (SES-2), at most
 * {@code sessionsPerRequesterMax} of them in node-id order; admitted sources beyond the limit are reported
 * as incomplete capacity (BND-3). Sessions of incarnations that left membership stop and their staging is
 * discarded (IDX-13); the receiver excludes their rows itself on its own membership input.
 */
public final class Subscriber implements InventorySubscriber {
    private final ClusterIdentity cluster;
    private final Incarnation self;
    private final Scope scope;
    private final ViewReceiver receiver;
    private final Function<Endpoint, ManagedChannel> channels;
    private final SessionConfig config;
    private final RequesterCounters counters = new RequesterCounters();
    /** Time and timers of every session of this subscriber (ACK cadence, receive deadline, backoff, waits). */
    private final ProtocolClock clock;
    /** The timer this subscriber made for itself when no clock was handed in; shut down on {@link #close()}. */
    private final ScheduledExecutorService ownTimer;
    /** Guarded by this subscriber's monitor, as are {@link #beyondLimit}, {@link #admittedSources} and {@link #stopped}. */
    private final Map<Incarnation, RequesterSession> sessions = new LinkedHashMap<>();
    private List<Incarnation> beyondLimit = List.of();
    private int admittedSources;
    /** Volatile: written under the monitor by {@link #onMembership}, read lock-free by every session's frame checks. */
    private volatile MembershipView view;
    private boolean stopped;

    private Subscriber(ClusterIdentity cluster, Incarnation self, Scope scope, ViewReceiver receiver,
            Function<Endpoint, ManagedChannel> channels, SessionConfig config, ProtocolClock clock,
            ScheduledExecutorService ownTimer) {
        this.clock = Objects.requireNonNull(clock, "clock");
        this.ownTimer = ownTimer;
        this.cluster = Objects.requireNonNull(cluster, "cluster");
        this.self = Objects.requireNonNull(self, "self");
        this.scope = Objects.requireNonNull(scope, "scope");
        this.receiver = Objects.requireNonNull(receiver, "receiver");
        this.channels = Objects.requireNonNull(channels, "channels");
        this.config = Objects.requireNonNull(config, "config");
    }

    public static InventorySubscriber create(ClusterIdentity cluster, Incarnation self, Scope scope, ViewReceiver receiver,
            Function<Endpoint, ManagedChannel> channels, SessionConfig config) {
        ScheduledExecutorService timer = SessionTimers.daemon("inventory-session-ack-timer");
        try {
            return new Subscriber(cluster, self, scope, receiver, channels, config, ProtocolClock.monotonic(timer), timer);
        } catch (RuntimeException e) {
            timer.shutdownNow();
            throw e;
        }
    }

    /** As the other {@code create}, on {@code clock}, whose timer the caller owns. */
    public static InventorySubscriber create(ClusterIdentity cluster, Incarnation self, Scope scope, ViewReceiver receiver,
            Function<Endpoint, ManagedChannel> channels, SessionConfig config, ProtocolClock clock) {
        return new Subscriber(cluster, self, scope, receiver, channels, config, clock, null);
    }

    ClusterIdentity cluster() {
        return cluster;
    }

    Incarnation self() {
        return self;
    }

    Scope scope() {
        return scope;
    }

    ViewReceiver receiver() {
        return receiver;
    }

    SessionConfig config() {
        return config;
    }

    RequesterCounters counters() {
        return counters;
    }

    ProtocolClock clock() {
        return clock;
    }

    MembershipView view() {
        return view;
    }

    /** SES-5: a session connects only while both incarnations are admitted by a valid view. */
    boolean admits(Incarnation source) {
        MembershipView v = view;
        return v != null && v.valid() && v.isAdmitted(source) && v.isAdmitted(self);
    }

    @Override
    public void onMembership(MembershipView next) {
        Objects.requireNonNull(next, "membership view");
        List<RequesterSession> toStop = new ArrayList<>();
        List<RequesterSession> toStart = new ArrayList<>();
        synchronized (this) {
            view = next;
            if (stopped || !next.valid()) {
                return; // suspended: sessions stay, frames are not admitted until a valid view (MEM-9)
            }
            List<Member> others = new ArrayList<>();
            for (Member m : next.members()) {
                if (!m.nodeId().equals(self.nodeId()) && m.serves()) { // requester-only members serve nothing (MEM-11)
                    others.add(m);
                }
            }
            others.sort(Comparator.comparing(Member::nodeId));
            Set<Incarnation> admitted = new HashSet<>();
            others.forEach(m -> admitted.add(m.incarnation()));
            for (var it = sessions.entrySet().iterator(); it.hasNext(); ) {
                var e = it.next();
                if (!admitted.contains(e.getKey())) {
                    toStop.add(e.getValue());
                    it.remove();
                }
            }
            List<Incarnation> beyond = new ArrayList<>();
            for (Member m : others) {
                if (sessions.containsKey(m.incarnation())) {
                    continue;
                }
                if (sessions.size() >= config.sessionsPerRequesterMax()) {
                    beyond.add(m.incarnation());
                    continue;
                }
                RequesterSession s = new RequesterSession(this, m.incarnation(), channels.apply(m.peer()));
                sessions.put(m.incarnation(), s);
                toStart.add(s);
            }
            beyondLimit = List.copyOf(beyond);
            admittedSources = others.size();
        }
        for (RequesterSession s : toStop) {
            s.stop(ErrorCause.UNKNOWN_SOURCE_INCARNATION, ResetCause.MEMBER_REMOVED);
        }
        toStart.forEach(RequesterSession::start);
    }

    @Override
    public boolean flushThrough(Incarnation source, long targetSequence) {
        if (targetSequence < 0) {
            throw new IllegalArgumentException("flush-through target must be >= 0, got " + targetSequence);
        }
        RequesterSession s;
        synchronized (this) {
            s = sessions.get(source);
        }
        return s != null && s.flushThrough(targetSequence);
    }

    @Override
    public synchronized SubscriptionStatus status() {
        return new SubscriptionStatus(admittedSources, sessions.values().stream().map(RequesterSession::status).toList(),
                beyondLimit);
    }

    @Override
    public void fence() {
        stopAll(ErrorCause.FENCED);
    }

    @Override
    public RequesterSessionMetrics metrics() {
        return counters.snapshot();
    }

    @Override
    public void close() {
        stopAll(ErrorCause.SHUTTING_DOWN);
        if (ownTimer != null) {
            ownTimer.shutdownNow();
        }
    }

    private void stopAll(ErrorCause cause) {
        List<RequesterSession> all;
        synchronized (this) {
            stopped = true;
            all = new ArrayList<>(sessions.values());
            sessions.clear();
            beyondLimit = List.of();
        }
        for (RequesterSession s : all) {
            s.stop(cause, ResetCause.DISCONNECT);
        }
    }
}
