package orbitkv.conformance.kit;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MemberRole;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipConfig;
import orbitkv.membership.NodeId;
import orbitkv.membership.Registrant;
import orbitkv.membership.RegistrationResult;

/**
 * The kit's own members of the target's cluster, registered through the exported membership API exactly as
 * a Manager registers (one etcd transaction: format guard, next epoch, leased member record). Node ids are
 * {@code <prefix>-<role>}, stable across runs, so a run adds at most one persistent {@code epochs/} key per
 * role (docs/conformance-kit.md lists them). Every member advertises the kit's listener as both its peer and
 * its control endpoint. The kit's requesters (roles {@code req*}) register as requester-only members (MEM-11): the
 * target admits their sessions but never subscribes to them, so the kit leaves the target's coverage exact; the
 * kit's source ({@code src}) registers as a serving member. {@link #close()} deregisters every member still held (the lease is revoked, the
 * record disappears at once); a killed kit's records expire with their lease.
 */
final class KitMembers implements KitIdentities, AutoCloseable {
    /** At most this many members at once (three requesters, one source, plus a session-limit run's extras). */
    static final int MEMBERS_MAX = 64;

    private final EtcdEndpoints etcd;
    private final String cluster;
    private final String prefix;
    private final Endpoint advertised;
    private final UUID expectedClusterUuid;
    private final List<Membership> held = new ArrayList<>();
    private ClusterIdentity clusterIdentity;

    /** {@code expectedClusterUuid}: the UUID the target reports; a registration in another cluster is refused (MEM-8). */
    KitMembers(EtcdEndpoints etcd, String cluster, String prefix, Endpoint advertised, UUID expectedClusterUuid) {
        this.expectedClusterUuid = expectedClusterUuid;
        this.etcd = etcd;
        this.cluster = cluster;
        this.prefix = prefix;
        this.advertised = advertised;
    }

    /** The member role of a kit role name: {@code req*} is requester-only (MEM-11), anything else serves. */
    static MemberRole memberRole(String role) {
        return role.startsWith("req") ? MemberRole.REQUESTER : MemberRole.SERVING;
    }

    /**
     * Registers (or re-registers, replacing the previous incarnation of) node {@code <prefix>-<role>}, as a
     * requester-only member when the role is {@code req*} ({@link #memberRole}).
     */
    @Override
    public synchronized Registered register(String role) {
        if (held.size() >= MEMBERS_MAX) {
            throw new IllegalStateException("the kit holds " + MEMBERS_MAX + " members already");
        }
        NodeId node = new NodeId(prefix + "-" + role);
        RegistrationResult r = Membership.register(etcd, new Registrant(cluster, node, advertised, advertised, Optional.of(expectedClusterUuid),
                        memberRole(role)),
                MembershipConfig.defaults());
        Membership m = switch (r) {
            case RegistrationResult.Registered ok -> ok.membership();
            case RegistrationResult.Unformatted u -> throw new IllegalStateException(u.message());
            case RegistrationResult.FormatMismatch f -> throw new IllegalStateException(f.message());
            case RegistrationResult.ClusterMismatch c -> throw new IllegalStateException(c.message());
            case RegistrationResult.Contended c -> throw new IllegalStateException("registration of " + c.nodeId()
                    + " contended: " + c.detail());
            case RegistrationResult.Unavailable u -> throw new IllegalStateException("etcd unavailable: " + u.cause());
            case RegistrationResult.TlsRefused t -> throw new IllegalStateException(t.message());
            case RegistrationResult.Superseded s -> throw new IllegalStateException(s.message());
        };
        held.add(m);
        if (clusterIdentity == null) {
            clusterIdentity = m.cluster();
        }
        return new Registered(m.incarnation(), m.view().revision());
    }

    /** The cluster identity read at the first registration (name and the format record's UUID). */
    @Override
    public synchronized ClusterIdentity cluster() {
        if (clusterIdentity == null) {
            throw new IllegalStateException("no kit member registered yet");
        }
        return clusterIdentity;
    }

    /** Deregisters one member (idempotent): its lease is revoked, its record disappears. */
    @Override
    public synchronized void release(Incarnation member) {
        held.removeIf(m -> {
            if (!m.incarnation().equals(member)) {
                return false;
            }
            m.close();
            return true;
        });
    }

    @Override
    public synchronized void close() {
        for (Membership m : held) {
            m.close();
        }
        held.clear();
    }
}
