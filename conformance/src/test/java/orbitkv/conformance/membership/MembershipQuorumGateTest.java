package orbitkv.conformance.membership;

import static orbitkv.conformance.membership.Gates.QUORUM;
import static orbitkv.conformance.membership.Gates.cluster;
import static orbitkv.conformance.membership.Gates.format;
import static orbitkv.conformance.membership.Gates.node;
import static orbitkv.conformance.membership.Gates.registered;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipEvent;
import orbitkv.membership.MembershipEvent.FenceCause;
import orbitkv.testing.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Membership on a 3-member etcd cluster with member loss (DESIGN §10). One scenario, in order, because
 * each leader kill costs ≈ 15 s: kill the leader (no false fence), restart it, kill a follower (no false
 * fence), then kill a second member (quorum lost: fence at the deadline, local state still readable).
 */
@Tag("gate")
class MembershipQuorumGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.cluster(3);

    @Test
    @DisplayName("MEM-8 INV-7 INV-10 leader loss and follower loss do not fence; losing quorum fences at the conservative deadline")
    void memberLoss() {
        String c = cluster();
        EtcdEndpoints etcd = ETCD.endpoints();
        format(etcd, c);
        Membership m = registered(etcd, node(c, "q"), QUORUM);
        EventLog log = new EventLog();
        m.addListener(log);
        try {
            Await.until("a renewal confirmed", Duration.ofSeconds(10), () -> m.leaseStatus().confirmedRenewals() > 0);

            // 1. leader: requests stall ≈ 7 s, then a new leader; renewals must get through before the deadline.
            EtcdFixture.Member leader = ETCD.leader();
            long killLeader = System.nanoTime();
            leader.kill();
            Duration recovered = Await.until("a renewal sent after the leader kill is confirmed", Duration.ofSeconds(QUORUM.fenceAfterRenewalMs() / 1000 + 3),
                    () -> m.fenced() || m.leaseStatus().lastConfirmedRenewalNanos() - killLeader > 0);
            assertThat(m.fenced()).as("no false fence after a leader kill").isFalse();
            assertThat(log.first(MembershipEvent.Fenced.class)).isEmpty();
            System.out.printf("leader %s killed: renewals confirmed again after %d ms (fence would be at %d ms), %d failed renewals%n",
                    leader, recovered.toMillis(), QUORUM.fenceAfterRenewalMs(), m.leaseStatus().failedRenewals());
            leader.restart();

            // 2. follower: invisible to the client.
            EtcdFixture.Member newLeader = ETCD.leader();
            EtcdFixture.Member follower = ETCD.members().stream().filter(x -> x != newLeader).findFirst().orElseThrow();
            long killFollower = System.nanoTime();
            follower.kill();
            Await.until("a renewal sent after the follower kill is confirmed", Duration.ofSeconds(QUORUM.fenceAfterRenewalMs() / 1000),
                    () -> m.fenced() || m.leaseStatus().lastConfirmedRenewalNanos() - killFollower > 0);
            assertThat(m.fenced()).as("no false fence after a follower kill").isFalse();
            assertThat(m.view().isAdmitted(m.incarnation())).isTrue();

            // 3. a second member: no quorum, no renewal can be confirmed; fence exactly at the deadline.
            EtcdFixture.Member second = ETCD.members().stream().filter(EtcdFixture.Member::alive).findFirst().orElseThrow();
            long lastBefore = m.leaseStatus().lastConfirmedRenewalNanos();
            second.kill();
            long quorumLost = System.nanoTime();
            Await.until("fenced after quorum loss", Duration.ofMillis(QUORUM.fenceAfterRenewalMs() + 3_000),
                    () -> log.first(MembershipEvent.Fenced.class).isPresent());
            var entry = log.first(MembershipEvent.Fenced.class).orElseThrow();
            var fenced = (MembershipEvent.Fenced) entry.event();
            long deadline = m.leaseStatus().deadlineNanos();
            assertThat(fenced.cause()).isEqualTo(FenceCause.LEASE_DEADLINE_PASSED);
            assertThat(entry.atNanos() - deadline).as("not before the deadline").isGreaterThanOrEqualTo(0);
            assertThat(entry.atNanos() - deadline).as("promptly at the deadline").isLessThan(1_000_000_000L);
            assertThat(deadline - m.leaseStatus().lastConfirmedRenewalNanos())
                    .isEqualTo(Duration.ofMillis(QUORUM.fenceAfterRenewalMs()).toNanos());
            assertThat(m.leaseStatus().lastConfirmedRenewalNanos() - lastBefore).isGreaterThanOrEqualTo(0);
            // Local state stays readable: the process keeps running and answers locally (INV-10).
            assertThat(m.view().valid()).isFalse();
            assertThat(m.view().isAdmitted(m.incarnation())).isFalse();
            assertThat(m.incarnation().nodeId().value()).isEqualTo("q");
            System.out.printf("quorum lost: fenced %d ms after the second kill, %d ms after the last confirmed renewal%n",
                    (entry.atNanos() - quorumLost) / 1_000_000, (entry.atNanos() - m.leaseStatus().lastConfirmedRenewalNanos()) / 1_000_000);
        } finally {
            m.close();
        }
    }
}
