package orbitkv.membership;

import java.util.function.Consumer;
import java.util.function.LongSupplier;
import orbitkv.membership.etcd.EtcdCalls;
import orbitkv.membership.etcd.EtcdMembership;

/**
 * One registered incarnation of this process and its view of the cluster (DESIGN §3).
 *
 * <p>Registration is one etcd transaction comparing the format value and mod revision and the node's
 * epoch key, writing the next epoch and the member record on a fresh lease (MEM-2). Lease renewal and the
 * membership watch then run as independent tasks (MEM-6); the view is bootstrapped at a fixed revision
 * and watched from the next one (MEM-7); a watch gap suspends remote admission until membership is read
 * again (MEM-9). When the conservative local deadline passes, or another registration replaces this
 * record, the incarnation is fenced irrevocably (INV-7): {@link #view()} becomes invalid forever and one
 * {@link MembershipEvent.Fenced} is delivered. Healing is a new registration ({@link #reregister()}).
 *
 * <p>Listeners are called in order on the membership's watch thread and must not block: a blocked
 * listener delays the view, never the lease renewal.
 */
public interface Membership extends AutoCloseable {
    /** At most this many listeners per membership. */
    int MAX_LISTENERS = 64;

    /** Registers with real etcd using the process's monotonic clock. */
    static RegistrationResult register(EtcdEndpoints etcd, Registrant registrant, MembershipConfig config) {
        return register(etcd, registrant, config, ProtocolClock.monotonicTimeOnly());
    }

    /** Registers with an injected monotonic clock (nanoseconds) for the fencing deadline. */
    static RegistrationResult register(EtcdEndpoints etcd, Registrant registrant, MembershipConfig config,
                                       LongSupplier monotonicNanos) {
        return EtcdMembership.register(etcd, registrant, config, monotonicNanos);
    }

    /**
     * Registers with the fencing deadline, renewal timing and lease health on {@code clock}'s time (issue 25).
     * Renewal and the watch keep their own threads (they block on etcd calls); only their time comes from the clock.
     */
    static RegistrationResult register(EtcdEndpoints etcd, Registrant registrant, MembershipConfig config,
                                       ProtocolClock clock) {
        return register(etcd, registrant, config, java.util.Objects.requireNonNull(clock, "clock")::nanoTime);
    }

    /**
     * Builds an etcd client for {@code etcd} and closes it without connecting: the runtime image's self-test
     * uses it to prove that jetcd, Vert.x and grpc resolve as named modules, without the Manager reading jetcd.
     *
     * @throws IllegalStateException if no client could be built
     */
    static void checkClientConstruction(EtcdEndpoints etcd) {
        EtcdCalls.constructAndClose(etcd);
    }

    /** This process's incarnation. */
    Incarnation incarnation();

    /** The cluster (name and the UUID read from the format record at registration). */
    ClusterIdentity cluster();

    /** The current immutable view; invalid while suspended and forever once fenced. */
    MembershipView view();

    /** True once fenced (irrevocable). */
    boolean fenced();

    /** The conservative lease deadline, renewal counters and lease state (degraded before the fence). */
    LeaseStatus leaseStatus();

    /** Member records refused so far (unleased, under another node's key, malformed): never members. */
    default MemberRecordRefusals refusedRecords() {
        return MemberRecordRefusals.NONE;
    }

    /**
     * Adds a listener; it first receives the current state as one event, then every later event in order.
     *
     * @throws IllegalStateException beyond {@link #MAX_LISTENERS}
     */
    void addListener(Consumer<MembershipEvent> listener);

    /**
     * Heals a fenced incarnation: a new registration of the same node id (a new incarnation at the next
     * epoch) with the same endpoints and configuration. Unlike a first registration it never replaces a
     * member record of another incarnation ({@link RegistrationResult.Superseded}): the transaction also
     * compares the member key, which must be absent or hold this fenced incarnation. This incarnation stays
     * fenced either way (INV-7); the caller closes it once the new one runs.
     *
     * @throws IllegalStateException if this incarnation is not fenced
     */
    RegistrationResult reregister();

    /**
     * Graceful deregistration: revokes the lease (which deletes the member record), fences this
     * incarnation with cause SHUTDOWN and releases the etcd client. Idempotent.
     */
    @Override
    void close();
}
