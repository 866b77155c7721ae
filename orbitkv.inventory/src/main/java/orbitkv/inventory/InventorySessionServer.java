package orbitkv.inventory;

import io.grpc.BindableService;
import java.util.List;
import java.util.function.Supplier;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;
import orbitkv.membership.ProtocolClock;

/**
 * The source end of InventorySession v4 (DESIGN §5, SES-1..SES-14): one directed session per requester,
 * served as its own gRPC service on the Manager's existing peer listener.
 *
 * <p>Wiring (the Manager): {@code serverBuilder.addService(server.bindableService())} on the peer listener
 * (Netty native transport), {@link #onMembership} on every membership view, {@link #fence()} on
 * {@code MembershipEvent.Fenced}, {@link #close()} on shutdown, and expose {@link #metrics()} snapshots
 * through the Manager's own metrics registry.
 */
public interface InventorySessionServer extends AutoCloseable {
    /**
     * A new server for {@code source}, the inventory of incarnation {@code self}.
     *
     * @param membership the current membership view, read at Open and before admitting further frames (SES-5)
     * @param source a source made by {@link InventorySource#create} (the session reads it through internal hooks)
     * @throws IllegalArgumentException if the source's frame bounds exceed the session's (BND-6), or the source
     *     was not made by {@link InventorySource#create}
     */
    static InventorySessionServer create(InventorySource source, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, SessionConfig config) {
        return orbitkv.inventory.session.SessionServer.create(source, cluster, self, membership, config);
    }

    /**
     * As {@link #create(InventorySource, ClusterIdentity, Incarnation, Supplier, SessionConfig)}, with the sessions'
     * time and timers on {@code clock} (issue 25): the Manager hands in its one production clock; a test or a
     * simulator hands in virtual time. The caller owns the clock's timer.
     */
    static InventorySessionServer create(InventorySource source, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, SessionConfig config, ProtocolClock clock) {
        return orbitkv.inventory.session.SessionServer.create(source, cluster, self, membership, config, clock);
    }

    /** The gRPC service {@code orbitkv.inventory.v4.InventorySession} to add to the peer listener. */
    BindableService bindableService();

    /** Re-checks live sessions against {@code view}; closes those whose requester is gone (SES-5). */
    void onMembership(MembershipView view);

    /** This incarnation is fenced: every session closes with {@code FENCED}, new Opens are refused (INV-7). */
    void fence();

    /** Per-session ledger and counters, bounded by {@code sessionsPerSourceMax}. */
    List<SourceSessionStatus> status();

    /** This server's session figures since it started, summed over its sessions (DIAG-3). */
    SourceSessionMetrics metrics();

    /**
     * Current members refused with {@code SESSION_LIMIT} and not served since (issue 33, BND-3): the Manager shows
     * them in /health and status; each episode is logged once.
     */
    default SessionLimitRefusals sessionLimitRefusals() {
        return SessionLimitRefusals.NONE;
    }

    /** Closes every session with {@code SHUTTING_DOWN} and stops their pumps. Idempotent. */
    @Override
    void close();
}
