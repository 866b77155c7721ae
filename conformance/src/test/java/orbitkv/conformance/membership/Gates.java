package orbitkv.conformance.membership;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.UUID;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.membership.Endpoint;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipAdmin;
import orbitkv.membership.MembershipConfig;
import orbitkv.membership.NodeId;
import orbitkv.membership.Registrant;
import orbitkv.membership.RegistrationResult;

/** Shared settings of the real-etcd membership gates. */
final class Gates {
    /**
     * Short timings for single-node gates: fence 4 s after the last confirmed renewal send
     * (6 s TTL - 2 s margin); etcd cannot expire the lease before 6 s after it processed that renewal.
     */
    static final MembershipConfig SHORT = new MembershipConfig(6_000, 2_000, 1_000, 1_000, 50, 500, 512);

    /**
     * Production-like timings for the quorum gates (the defaults): fence 12 s after the last confirmed
     * renewal send. A leader loss stalls requests ≈ 7 s; renewals every 2 s with 2 s call deadlines are
     * retried, so the first renewal after the election is sent ≤ 2 + 7 + 2 = 11 s after the last confirmed
     * one: before 12 s, no false fence. Losing quorum fences at 12 s.
     */
    static final MembershipConfig QUORUM = MembershipConfig.defaults();

    private Gates() {}

    static String cluster() {
        return "c-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static void format(EtcdEndpoints etcd, String cluster) {
        try (MembershipAdmin admin = MembershipAdmin.connect(etcd, cluster, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            assertThat(admin.format()).isInstanceOf(MembershipAdmin.Formatted.class);
        }
    }

    static Registrant node(String cluster, String node) {
        return new Registrant(cluster, new NodeId(node), Endpoint.parse("127.0.0.1:7001"), Endpoint.parse("127.0.0.1:8001"));
    }

    static Membership registered(EtcdEndpoints etcd, Registrant who, MembershipConfig config) {
        RegistrationResult r = Membership.register(etcd, who, config);
        assertThat(r).as("registration of %s", who.nodeId()).isInstanceOf(RegistrationResult.Registered.class);
        return ((RegistrationResult.Registered) r).membership();
    }
}
