package orbitkv.inventory;

import io.grpc.BindableService;
import io.prometheus.metrics.core.metrics.Metric;
import java.util.List;
import java.util.function.Supplier;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;

/**
 * The source end of InventorySession v4 (DESIGN §5, SES-1..SES-14): one directed session per requester,
 * served as its own gRPC service on the Manager's existing peer listener.
 *
 * <p>Wiring (the Manager): {@code serverBuilder.addService(server.bindableService())} on the peer listener
 * (Netty native transport), {@link #onMembership} on every membership view, {@link #fence()} on
 * {@code MembershipEvent.Fenced}, {@link #close()} on shutdown, and register {@link #metrics()} once.
 */
public interface InventorySessionServer extends AutoCloseable {
    /**
     * A new server for {@code source}, the inventory of incarnation {@code self}.
     *
     * @param membership the current membership view, read at Open and before admitting further frames (SES-5)
     * @throws IllegalArgumentException if the source's frame bounds exceed the session's (BND-6)
     */
    static InventorySessionServer create(InventorySource source, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, SessionConfig config) {
        return create(source, cluster, self, membership, config, SessionMetricSet.create());
    }

    /**
     * A new server counting into {@code metrics}, the process's set shared with its {@link InventorySubscriber}
     * (register it once).
     */
    static InventorySessionServer create(InventorySource source, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, SessionConfig config, SessionMetricSet metrics) {
        return orbitkv.inventory.session.SessionServer.create(source, cluster, self, membership, config, metrics);
    }

    /** The gRPC service {@code orbitkv.inventory.v4.InventorySession} to add to the peer listener. */
    BindableService bindableService();

    /** Re-checks live sessions against {@code view}; closes those whose requester is gone (SES-5). */
    void onMembership(MembershipView view);

    /** This incarnation is fenced: every session closes with {@code FENCED}, new Opens are refused (INV-7). */
    void fence();

    /** Per-session ledger and counters, bounded by {@code sessionsPerSourceMax}. */
    List<SourceSessionStatus> status();

    /** The metrics of this server's {@link SessionMetricSet} (shared if one was given), unregistered. */
    List<Metric> metrics();

    /** Closes every session with {@code SHUTTING_DOWN} and stops their pumps. Idempotent. */
    @Override
    void close();
}
