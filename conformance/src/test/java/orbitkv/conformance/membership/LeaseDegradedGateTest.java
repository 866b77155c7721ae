package orbitkv.conformance.membership;

import orbitkv.conformance.peer.FaultProxy;
import orbitkv.conformance.peer.LinkFaults;
import static orbitkv.conformance.membership.Gates.SHORT;
import static orbitkv.conformance.membership.Gates.cluster;
import static orbitkv.conformance.membership.Gates.format;
import static orbitkv.conformance.membership.Gates.node;
import static orbitkv.conformance.membership.Gates.registered;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.LeaseStatus;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipConfig;
import orbitkv.membership.MembershipEvent;
import orbitkv.membership.NodeId;
import orbitkv.testing.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * etcd unreachable is visible before the fence, and only leased member records are members (issue 20 items
 * 6 and 7), against a real etcd process (through a loopback proxy for the outage).
 */
@Tag("gate")
class LeaseDegradedGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final Duration BOUND = Duration.ofSeconds(15);
    /** Fence 8 s after the last confirmed renewal send; renewals every 1 s with 1 s deadlines. */
    private static final MembershipConfig SLOW_FENCE = new MembershipConfig(10_000, 2_000, 1_000, 1_000, 50, 500, 512);

    @Test
    @DisplayName("MEM-8 an etcd outage shows as RENEWAL_FAILING while the incarnation is still admitted; a renewal heals it without a fence")
    void outageDegradesBeforeTheFence() throws Exception {
        String c = cluster();
        format(ETCD.endpoints(), c);
        try (FaultProxy proxy = FaultProxy.inFrontOf(ETCD.member(0).clientUrl())) {
            Membership m = registered(new EtcdEndpoints(List.of(proxy.url())), node(c, "d"), SLOW_FENCE);
            EventLog log = new EventLog();
            m.addListener(log);
            try {
                Await.until("a renewal confirmed", BOUND, () -> m.leaseStatus().confirmedRenewals() > 0);
                assertThat(m.leaseStatus().state()).isEqualTo(LeaseStatus.LeaseState.HEALTHY);
                proxy.faults(LinkFaults.BLACKHOLE);
                long cut = System.nanoTime();
                Duration seen = Await.until("renewals reported failing", BOUND,
                        () -> m.leaseStatus().state() != LeaseStatus.LeaseState.HEALTHY);
                LeaseStatus degraded = m.leaseStatus();
                assertThat(degraded.state()).isEqualTo(LeaseStatus.LeaseState.RENEWAL_FAILING);
                assertThat(m.fenced()).as("degraded after %d ms, before the fence", seen.toMillis()).isFalse();
                assertThat(m.view().valid()).isTrue();
                assertThat(degraded.deadlineNanos() - System.nanoTime())
                        .as("the outage is visible while the fence is still ahead").isPositive();
                assertThat(seen).as("visible within a renewal interval plus two call deadlines")
                        .isLessThanOrEqualTo(Duration.ofMillis(SLOW_FENCE.renewalIntervalMs() + 2 * SLOW_FENCE.etcdCallTimeoutMs() + 1_000));
                proxy.faults(LinkFaults.NONE);
                Await.until("a renewal confirmed again", BOUND, () -> m.leaseStatus().state() == LeaseStatus.LeaseState.HEALTHY);
                assertThat(m.leaseStatus().consecutiveFailedRenewals()).isZero();
                assertThat(m.leaseStatus().failedRenewals()).isPositive();
                assertThat(log.first(MembershipEvent.Fenced.class)).as("outage of %d ms healed before the fence",
                        (System.nanoTime() - cut) / 1_000_000).isEmpty();
            } finally {
                m.close();
            }
        }
    }

    private static String record(String node, long epoch) {
        return "node_id = " + node + "\nnode_epoch = " + epoch + "\nincarnation = " + UUID.randomUUID()
                + "\npeer = 127.0.0.1:7001\ncontrol = 127.0.0.1:8001\nprotocol = " + ClusterIdentity.PROTOCOL + "\n";
    }

    @Test
    @DisplayName("MEM-4 MEM-7 only leased member records under their own key are members: a plain put, a wrong key and a malformed record are refused and counted")
    void onlyLeasedRecordsAreMembers() {
        String c = cluster();
        EtcdEndpoints etcd = ETCD.endpoints();
        format(etcd, c);
        String members = "/orbitkv/v2/" + c + "/members/";
        ETCD.put(members + "early", record("early", 1)); // already there at bootstrap
        Membership a = registered(etcd, node(c, "a"), SHORT);
        Membership b = registered(etcd, node(c, "b"), SHORT);
        EventLog logB = new EventLog();
        b.addListener(logB);
        try {
            Await.until("a admits b", BOUND, () -> a.view().isAdmitted(b.incarnation()));
            assertThat(a.view().member(new NodeId("early"))).isEmpty();
            assertThat(a.refusedRecords().unleased()).isGreaterThanOrEqualTo(1);

            ETCD.put(members + "ghost", record("ghost", 1));
            ETCD.put(members + "elsewhere", record("other", 1));
            ETCD.put(members + "junk", "not a member record");
            Await.until("a counts every refusal", BOUND, () -> a.refusedRecords().unleased() >= 2
                    && a.refusedRecords().keyMismatch() >= 1 && a.refusedRecords().malformed() >= 1);
            assertThat(a.view().members()).extracting(mm -> mm.nodeId().value()).containsExactly("a", "b");

            // A plain put over b's record: no registration wrote it, so b diagnoses tampering (issue 33; was LEASE_LOST)
            ETCD.put(members + "b", record("b", b.incarnation().epoch().value() + 1));
            Await.until("a drops b, whose record lost its lease", BOUND, () -> a.view().member(new NodeId("b")).isEmpty());
            Await.until("b fences itself", BOUND, () -> b.fenced());
            // fenced() turns true before the listeners receive the Fenced event: await its delivery
            Await.until("b's Fenced event delivered", BOUND, () -> logB.first(MembershipEvent.Fenced.class).isPresent());
            assertThat(((MembershipEvent.Fenced) logB.first(MembershipEvent.Fenced.class).orElseThrow().event()).cause())
                    .isEqualTo(MembershipEvent.FenceCause.MEMBER_RECORD_TAMPERED);
            assertThat(a.view().members()).extracting(mm -> mm.nodeId().value()).containsExactly("a");
            assertThat(a.fenced()).isFalse();
        } finally {
            a.close();
            b.close();
        }
    }
}
