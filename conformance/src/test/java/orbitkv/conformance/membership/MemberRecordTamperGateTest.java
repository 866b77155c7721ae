package orbitkv.conformance.membership;

import static orbitkv.conformance.membership.Gates.SHORT;
import static orbitkv.conformance.membership.Gates.cluster;
import static orbitkv.conformance.membership.Gates.format;
import static orbitkv.conformance.membership.Gates.node;
import static orbitkv.conformance.membership.Gates.registered;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.UUID;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipEvent;
import orbitkv.membership.MembershipEvent.FenceCause;
import orbitkv.membership.RegistrationResult;
import orbitkv.testing.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 33: "A leased rewrite of a member's own record is diagnosed as 'replaced by' itself and stops
 * self-healing for good." Someone with etcd access rewrites a live Manager's own member record without a
 * registration transaction. The incarnation must diagnose it as {@link FenceCause#MEMBER_RECORD_TAMPERED} (not
 * {@link FenceCause#REPLACED_BY_NEWER_INCARNATION}, which stops healing), fence (INV-7: peers saw a record it did
 * not write) and heal with a new incarnation that replaces the tampered record (MEM-2). A real registration of the
 * same node id stays {@code REPLACED_BY_NEWER_INCARNATION} ({@code MembershipGateTest.replacementFencesTheOld}).
 */
@Tag("gate")
class MemberRecordTamperGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    private static final Duration BOUND = Duration.ofSeconds(30);

    @Test
    @DisplayName("MEM-2 INV-7 a leased rewrite of a member's own record is diagnosed as tampering, not 'replaced by' itself, and healing continues")
    void leasedRewriteOfOwnRecordIsTamperingAndHealingContinues() {
        // The same bytes put again on another lease: before, "replaced by <itself> on lease X" and no heal.
        tamperAndHeal("same", (c, key, record) -> {
            String lease = grantLease();
            ETCD.etcdctl("put", "--lease=" + lease, key, "--", record);
        });
    }

    @Test
    @DisplayName("MEM-2 MEM-4 a rewrite on the member's own lease with another peer endpoint is tampering (it was admitted silently)")
    void sameLeaseRewriteWithOtherPeerIsTampering() {
        tamperAndHeal("peer", (c, key, record) -> ETCD.etcdctl("put", "--lease=" + leaseOf(key), key, "--",
                record.replace("peer = 127.0.0.1:7001", "peer = 127.0.0.1:7999")));
    }

    @Test
    @DisplayName("MEM-2 MEM-5 a record naming a made-up newer incarnation that no registration wrote is tampering, and the heal replaces it")
    void madeUpNewerIncarnationIsTampering() {
        tamperAndHeal("forged", (c, key, record) -> {
            String forged = replaceLine(record, "node_epoch = ", v -> Long.toString(Long.parseLong(v) + 5));
            forged = replaceLine(forged, "incarnation = ", v -> UUID.randomUUID().toString());
            ETCD.etcdctl("put", "--lease=" + grantLease(), key, "--", forged);
        });
    }

    @Test
    @DisplayName("MEM-4 a plain put (no lease) over the member's own record is tampering and the heal replaces it")
    void unleasedRewriteIsTampering() {
        tamperAndHeal("plain", (c, key, record) -> ETCD.put(key, record));
    }

    private interface Tamper {
        void apply(String cluster, String key, String record);
    }

    private static void tamperAndHeal(String node, Tamper tamper) {
        String c = cluster();
        EtcdEndpoints etcd = ETCD.endpoints();
        format(etcd, c);
        Membership observer = registered(etcd, node(c, "observer"), SHORT);
        Membership victim = registered(etcd, node(c, node), SHORT);
        Membership healed = null;
        EventLog log = new EventLog();
        victim.addListener(log);
        try {
            Await.until("observer admits " + node, BOUND, () -> observer.view().isAdmitted(victim.incarnation()));
            String key = "/orbitkv/v2/" + c + "/members/" + node;
            String record = ETCD.get(key); // etcdctl's own line end stripped: the record's last "\n" remains
            assertThat(record).startsWith("node_id = " + node + "\n").endsWith("\n");
            tamper.apply(c, key, record);

            Await.until(node + "'s Fenced event delivered", BOUND, () -> log.first(MembershipEvent.Fenced.class).isPresent());
            var fenced = (MembershipEvent.Fenced) log.first(MembershipEvent.Fenced.class).orElseThrow().event();
            assertThat(fenced.cause()).as("diagnosis of a rewrite of %s's own record", node)
                    .isEqualTo(FenceCause.MEMBER_RECORD_TAMPERED);
            assertThat(fenced.fenced()).isEqualTo(victim.incarnation());

            RegistrationResult heal = victim.reregister();
            assertThat(heal).as("the heal after tampering").isInstanceOf(RegistrationResult.Registered.class);
            healed = ((RegistrationResult.Registered) heal).membership();
            Membership next = healed;
            assertThat(next.incarnation().epoch().value()).isGreaterThan(victim.incarnation().epoch().value());
            assertThat(ETCD.get(key)).contains("incarnation = " + next.incarnation().id());
            Await.until("observer admits the healed incarnation", BOUND, () -> observer.view().isAdmitted(next.incarnation()));
            assertThat(observer.view().isAdmitted(victim.incarnation())).isFalse();
            assertThat(next.fenced()).isFalse();
        } finally {
            victim.close();
            if (healed != null) {
                healed.close();
            }
            observer.close();
        }
    }

    private static String grantLease() {
        Matcher m = Pattern.compile("lease ([0-9a-f]+) granted").matcher(ETCD.etcdctl("lease", "grant", "600"));
        assertThat(m.find()).as("etcdctl lease grant output").isTrue();
        return m.group(1);
    }

    private static String leaseOf(String key) {
        Matcher m = Pattern.compile("\"lease\":(\\d+)").matcher(ETCD.etcdctl("get", key, "-w", "json"));
        assertThat(m.find()).as("lease of %s", key).isTrue();
        return Long.toHexString(Long.parseLong(m.group(1)));
    }

    private static String replaceLine(String record, String head, UnaryOperator<String> value) {
        StringBuilder out = new StringBuilder();
        for (String line : record.split("\n", -1)) {
            if (!out.isEmpty()) {
                out.append('\n');
            }
            out.append(line.startsWith(head) ? head + value.apply(line.substring(head.length())) : line);
        }
        return out.toString();
    }
}
