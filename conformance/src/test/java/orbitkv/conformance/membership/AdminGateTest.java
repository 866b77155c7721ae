package orbitkv.conformance.membership;

import static orbitkv.conformance.membership.Gates.SHORT;
import static orbitkv.conformance.membership.Gates.cluster;
import static orbitkv.conformance.membership.Gates.node;
import static orbitkv.conformance.membership.Gates.registered;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.FormatRecord;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipAdmin;
import orbitkv.membership.MembershipAdmin.Reason;
import orbitkv.membership.MembershipAdmin.Refusal;
import orbitkv.membership.RegistrationResult;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The offline tool on real etcd (the design's <i>Cutover, rollback and handoff</i>). The "old binary"
 * wrote {@code protocol = orbitkv/etcd-block-publisher/v3} plus its cluster_uuid as the format value,
 * bare decimal epochs, block keys {@code blocks/<ns>/<key>} and a publisher cursor
 * {@code publisher/cursor} (docs/operations.md).
 */
@Tag("gate")
class AdminGateTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    static final String OLD_UUID = "6f1c1c44-0000-4000-8000-00000000abcd";
    static final String OLD_FORMAT = "protocol = orbitkv/etcd-block-publisher/v3\ncluster_uuid = " + OLD_UUID + "\n";

    @TempDir
    Path dir;

    private static void oldCluster(String p) {
        ETCD.put(p + "format", OLD_FORMAT);
        ETCD.put(p + "epochs/n1", "4");
        ETCD.put(p + "blocks/ns1/00aa", "owner=n1 seq=17");
        ETCD.put(p + "blocks/ns1/00bb", "owner=n1 seq=18");
        ETCD.put(p + "publisher/cursor", "18");
    }

    @Test
    @DisplayName("MEM-1 MEM-3 MEM-5 cutover and rollback round trip: show prints the exact keys cutover touches; epochs are preserved and never decrease; old/new binaries refuse each other")
    void cutoverRollbackRoundTrip() throws Exception {
        String c = cluster();
        String p = "/orbitkv/v2/" + c + "/";
        EtcdEndpoints etcd = ETCD.endpoints();
        oldCluster(p);
        // an old Manager is still registered on a live lease
        String lease = ETCD.etcdctl("lease", "grant", "60").split("\\s+")[1];
        ETCD.etcdctl("put", "--lease=" + lease, p + "members/n1", "old-binary-registration");
        Path backup = dir.resolve("backup.json");
        try (MembershipAdmin admin = MembershipAdmin.connect(etcd, c, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            var shown = (MembershipAdmin.NamespaceReport) admin.show();
            assertThat(shown.formatIsCurrent()).isFalse();
            assertThat(shown.plan().keysToRetire()).containsExactly(p + "blocks/ns1/00aa", p + "blocks/ns1/00bb", p + "publisher/cursor");
            assertThat(shown.plan().formatTo()).contains(new FormatRecord(java.util.UUID.fromString(OLD_UUID)).encode());
            assertThat(shown.plan().blockers()).containsExactly("live lease on " + p + "members/n1");
            assertThat(shown.liveLeaseKeys()).containsExactly(p + "members/n1");

            assertThat(admin.cutover(backup)).isEqualTo(new Refusal(Reason.LIVE_REGISTRATIONS,
                    "stop every Manager first; live leases on [" + p + "members/n1]"));
            ETCD.etcdctl("lease", "revoke", lease); // the old Manager is stopped: its registration is gone
            assertThat(admin.cutover(backup)).isInstanceOfSatisfying(Refusal.class,
                    r -> assertThat(r.reason()).isEqualTo(Reason.BACKUP_MISSING));

            assertThat(admin.backup(backup)).isInstanceOfSatisfying(MembershipAdmin.BackupWritten.class,
                    b -> assertThat(b.keys()).isEqualTo(5));
            List<String> planned = ((MembershipAdmin.NamespaceReport) admin.show()).plan().keysToRetire();
            var cut = (MembershipAdmin.CutOver) admin.cutover(backup);
            assertThat(cut.retired()).as("exactly the keys show printed").isEqualTo(planned);
            assertThat(cut.kept()).isEmpty();
            assertThat(cut.oldFormat()).isEqualTo(OLD_FORMAT);
            assertThat(ETCD.get(p + "format")).isEqualTo(cut.newFormat());
            assertThat(FormatRecord.parseCanonicalOrNull(cut.newFormat()).clusterUuid().toString()).isEqualTo(OLD_UUID);
            assertThat(ETCD.keys(p)).containsExactly(p + "epochs/n1", p + "format");
            assertThat(ETCD.get(p + "epochs/n1")).isEqualTo("4");
            assertThat(admin.cutover(backup)).isInstanceOfSatisfying(Refusal.class,
                    r -> assertThat(r.reason()).isEqualTo(Reason.ALREADY_CURRENT));
        }

        // the new binary registers above the preserved epoch
        Membership n1 = registered(etcd, node(c, "n1"), SHORT);
        assertThat(n1.incarnation().epoch().value()).isEqualTo(5);
        try (MembershipAdmin admin = MembershipAdmin.connect(etcd, c, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            assertThat(admin.rollback(backup)).isInstanceOfSatisfying(Refusal.class,
                    r -> assertThat(r.reason()).isEqualTo(Reason.LIVE_REGISTRATIONS));
            n1.close();
            var back = (MembershipAdmin.RolledBack) admin.rollback(backup);
            assertThat(back.restoredFormat()).isEqualTo(OLD_FORMAT);
            assertThat(ETCD.get(p + "format")).isEqualTo(OLD_FORMAT);
            assertThat(ETCD.get(p + "epochs/n1")).as("rollback never decreases epochs").startsWith("node_epoch = 5\n");
            assertThat(ETCD.keys(p)).doesNotContain(p + "blocks/ns1/00aa"); // metadata is rebuilt, never restored

            // old-binary rejection in the other direction: the v4 binary refuses the restored old format
            RegistrationResult refused = Membership.register(etcd, node(c, "n1"), SHORT);
            assertThat(refused).isInstanceOfSatisfying(RegistrationResult.FormatMismatch.class,
                    m -> assertThat(m.message()).contains("orbitkv/etcd-block-publisher/v3").contains("orbitkv/inventory-stream/v4"));

            // a second cutover needs a backup of the current state
            assertThat(admin.cutover(backup)).isInstanceOfSatisfying(Refusal.class,
                    r -> assertThat(r.reason()).isEqualTo(Reason.BACKUP_STALE));
            Path second = dir.resolve("backup-2.json");
            assertThat(admin.backup(second)).isInstanceOf(MembershipAdmin.BackupWritten.class);
            assertThat(admin.cutover(second)).isInstanceOf(MembershipAdmin.CutOver.class);
        }
        Membership again = registered(etcd, node(c, "n1"), SHORT);
        try {
            assertThat(again.incarnation().epoch().value()).as("epochs preserved across the round trip").isEqualTo(6);
        } finally {
            again.close();
        }
        assertThat(Files.readString(backup)).contains("\"orbitkv_backup\" : 1");
    }

    @Test
    @DisplayName("MEM-1 format creates the v4 record once and refuses to overwrite")
    void formatOnce() {
        String c = cluster();
        try (MembershipAdmin admin = MembershipAdmin.connect(ETCD.endpoints(), c, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            var f = (MembershipAdmin.Formatted) admin.format();
            assertThat(ETCD.get("/orbitkv/v2/" + c + "/format")).isEqualTo(f.value());
            assertThat(FormatRecord.parseCanonicalOrNull(f.value()).clusterUuid()).isEqualTo(f.cluster().uuid());
            assertThat(admin.format()).isInstanceOfSatisfying(Refusal.class, r -> {
                assertThat(r.reason()).isEqualTo(Reason.ALREADY_FORMATTED);
                assertThat(r.detail()).contains(f.cluster().uuid().toString());
            });
            assertThat(ETCD.get("/orbitkv/v2/" + c + "/format")).isEqualTo(f.value());
        }
    }

    @Test
    @DisplayName("MEM-5 prune-epochs deletes inactive nodes' epochs only after raising the floor: a returning node never goes back")
    void pruneEpochs() {
        String c = cluster();
        String p = "/orbitkv/v2/" + c + "/";
        EtcdEndpoints etcd = ETCD.endpoints();
        Gates.format(etcd, c);
        ETCD.put(p + "epochs/gone", "node_epoch = 9\nissued_unix_ms = 1000\n");
        ETCD.put(p + "epochs/legacy", "3");
        Membership live = registered(etcd, node(c, "live"), SHORT);
        try (MembershipAdmin admin = MembershipAdmin.connect(etcd, c, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            assertThat(admin.pruneEpochs(Duration.ZERO)).isInstanceOfSatisfying(Refusal.class,
                    r -> assertThat(r.detail()).contains("--inactive-for"));
            var pruned = (MembershipAdmin.Pruned) admin.pruneEpochs(Duration.ofDays(1));
            assertThat(pruned.nodes()).containsExactly("gone");
            assertThat(pruned.floorEpoch()).isEqualTo(9);
            assertThat(pruned.kept()).containsExactlyInAnyOrder("legacy (issue time unknown: legacy epoch value)", "live");
            assertThat(ETCD.get(p + "epochs/gone")).isNull();
        }
        Membership back = registered(etcd, node(c, "gone"), SHORT);
        try {
            assertThat(back.incarnation().epoch().value()).as("above every epoch it ever had").isEqualTo(10);
        } finally {
            back.close();
            live.close();
        }
    }
}
