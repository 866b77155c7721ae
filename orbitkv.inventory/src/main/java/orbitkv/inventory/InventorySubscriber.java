package orbitkv.inventory;

import io.grpc.ManagedChannel;
import java.util.function.Function;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;
import orbitkv.membership.ProtocolClock;

/**
 * The requester end of InventorySession v4 (DESIGN §5): one directed session per admitted source member
 * carrying this requester's one canonical scope (SES-2), applying into a {@link ViewReceiver} (the
 * GlobalIndex), reconnecting with backoff and resuming only from an installed view (SNAP-8).
 *
 * <p>Wiring (the Manager): {@link #onMembership} on every membership view (it starts a session per admitted
 * member other than {@code self} and stops those of departed incarnations), {@link #fence()} on
 * {@code MembershipEvent.Fenced}, {@link #close()} on shutdown. The channel factory builds a channel to a
 * member's peer endpoint (the server supplies the Netty native transport); the subscriber shuts it down.
 */
public interface InventorySubscriber extends AutoCloseable {
    /** A new subscriber; no session starts before the first {@link #onMembership}. */
    static InventorySubscriber create(ClusterIdentity cluster, Incarnation self, Scope scope, ViewReceiver receiver,
            Function<Endpoint, ManagedChannel> channels, SessionConfig config) {
        return orbitkv.inventory.session.Subscriber.create(cluster, self, scope, receiver, channels, config);
    }

    /**
     * As the other {@code create}, with the sessions' time and timers (ACK cadence, receive deadline, reconnect
     * backoff) on {@code clock} (issue 25): the Manager's one production clock, or virtual time in a test or a
     * simulator. The caller owns the clock's timer; the clock must be able to schedule (the ACK timer), so
     * {@link ProtocolClock#monotonicTimeOnly()} does not serve here.
     */
    static InventorySubscriber create(ClusterIdentity cluster, Incarnation self, Scope scope, ViewReceiver receiver,
            Function<Endpoint, ManagedChannel> channels, SessionConfig config, ProtocolClock clock) {
        return orbitkv.inventory.session.Subscriber.create(cluster, self, scope, receiver, channels, config, clock);
    }

    /**
     * A new membership view: starts sessions for newly admitted members (at most
     * {@code sessionsPerRequesterMax}; the rest are reported in {@link #status()}, BND-3), stops sessions of
     * incarnations no longer admitted and discards their staging (IDX-13).
     */
    void onMembership(MembershipView view);

    /**
     * Asks {@code source} to expose everything through {@code targetSequence} promptly (PUB-4, API-5).
     *
     * @return false if no session to that incarnation is open
     */
    boolean flushThrough(Incarnation source, long targetSequence);

    /** Sessions, capacity and counters. */
    SubscriptionStatus status();

    /** This incarnation is fenced: all sessions close with {@code FENCED} and none restart (INV-7). */
    void fence();

    /** This subscriber's session figures since it started, summed over its sessions (DIAG-3). */
    RequesterSessionMetrics metrics();

    /** Closes every session. Idempotent. */
    @Override
    void close();
}
