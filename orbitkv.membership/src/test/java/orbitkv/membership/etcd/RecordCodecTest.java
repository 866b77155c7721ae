package orbitkv.membership.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.FormatRecord;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MemberRole;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class RecordCodecTest {
    private static final Member M = new Member(
            new Incarnation(new NodeId("node-a"), new NodeEpoch(7), UUID.fromString("00000000-0000-0000-0000-000000000042")),
            Endpoint.parse("10.0.0.1:7000"), Endpoint.parse("[::1]:8080"), ClusterIdentity.PROTOCOL);

    @Test
    @DisplayName("MEM-4 the member record is six canonical lines, bounded")
    void memberCanonical() {
        String text = MemberCodec.encode(M);
        assertThat(text).isEqualTo("""
                node_id = node-a
                node_epoch = 7
                incarnation = 00000000-0000-0000-0000-000000000042
                peer = 10.0.0.1:7000
                control = [::1]:8080
                protocol = orbitkv/inventory-stream/v4
                """);
        assertThat(MemberCodec.decode(text)).isEqualTo(M);
    }

    @Test
    @DisplayName("MEM-4 the worked example of docs/operations.md §2 is the encoder's exact bytes")
    void operationsWorkedExample() {
        Member m = new Member(new Incarnation(new NodeId("gpu-host-07"), new NodeEpoch(3),
                UUID.fromString("3f1c2a9e-7b4d-4e21-9a0c-5d8e6f4b2a17")),
                Endpoint.parse("10.0.0.5:7000"), Endpoint.parse("10.0.0.5:8090"), ClusterIdentity.PROTOCOL);
        byte[] bytes = MemberCodec.encode(m).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertThat(bytes).hasSize(172);
        assertThat(java.util.HexFormat.of().formatHex(bytes)).isEqualTo(
                "6e6f64655f6964203d206770752d686f73742d30370a6e6f64655f65706f6368"
                + "203d20330a696e6361726e6174696f6e203d2033663163326139652d37623464"
                + "2d346532312d396130632d3564386536663462326131370a70656572203d2031"
                + "302e302e302e353a373030300a636f6e74726f6c203d2031302e302e302e353a"
                + "383039300a70726f746f636f6c203d206f726269746b762f696e76656e746f72"
                + "792d73747265616d2f76340a");
        assertThat(MemberCodec.decode(MemberCodec.encode(m))).isEqualTo(m);
        String text = MemberCodec.encode(m);
        // the doc's non-canonical examples are refused
        for (String bad : new String[] {text.replace("node_epoch = 3", "node_epoch = 03"),
                text.replace("3f1c2a9e", "3F1C2A9E"), text.replace(":7000", ":07000"),
                text.substring(0, text.length() - 1)}) {
            assertThatThrownBy(() -> MemberCodec.decode(bad)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    @DisplayName("MEM-11 a requester-only record is the six serving lines plus 'role = requester'; both round-trip")
    void requesterRoleRoundTrip() {
        Member req = new Member(M.incarnation(), M.peer(), M.control(), M.protocol(), MemberRole.REQUESTER);
        String text = MemberCodec.encode(req);
        assertThat(text).isEqualTo(MemberCodec.encode(M) + "role = requester\n");
        assertThat(MemberCodec.decode(text)).isEqualTo(req);
        assertThat(MemberCodec.decode(text).serves()).isFalse();
        assertThat(MemberCodec.decode(MemberCodec.encode(M))).isEqualTo(M);
        assertThat(MemberCodec.decode(MemberCodec.encode(M)).role()).isEqualTo(MemberRole.SERVING);
        // a serving role is never written: the seventh line exists only for requester-only members
        assertThatThrownBy(() -> MemberCodec.decode(MemberCodec.encode(M) + "role = serving\n"))
                .hasMessageContaining("line 7 must be 'role = requester'");
        assertThatThrownBy(() -> MemberCodec.decode(MemberCodec.encode(M) + "role = requester"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> MemberCodec.decode(MemberCodec.encode(M) + "role = requester \n"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("MEM-11 a six-line record written before the role existed decodes unchanged, as a serving member")
    void oldSixLineRecordIsServing() {
        String old = """
                node_id = node-a
                node_epoch = 7
                incarnation = 00000000-0000-0000-0000-000000000042
                peer = 10.0.0.1:7000
                control = [::1]:8080
                protocol = orbitkv/inventory-stream/v4
                """;
        Member m = MemberCodec.decode(old);
        assertThat(m.role()).isEqualTo(MemberRole.SERVING);
        assertThat(m).isEqualTo(M);
        assertThat(MemberCodec.encode(m)).isEqualTo(old); // serving records keep their exact bytes
    }

    @Test
    @DisplayName("MEM-11 the requester worked example of docs/operations.md §2 is the encoder's exact bytes")
    void operationsRequesterExample() {
        Member m = new Member(new Incarnation(new NodeId("py-indexer"), new NodeEpoch(1),
                UUID.fromString("9b2e4f60-1c3d-4a5b-8e7f-0a1b2c3d4e5f")),
                Endpoint.parse("127.0.0.1:7100"), Endpoint.parse("127.0.0.1:7100"), ClusterIdentity.PROTOCOL,
                MemberRole.REQUESTER);
        String text = MemberCodec.encode(m);
        assertThat(text).isEqualTo("""
                node_id = py-indexer
                node_epoch = 1
                incarnation = 9b2e4f60-1c3d-4a5b-8e7f-0a1b2c3d4e5f
                peer = 127.0.0.1:7100
                control = 127.0.0.1:7100
                protocol = orbitkv/inventory-stream/v4
                role = requester
                """);
        assertThat(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)).hasSize(190);
        assertThat(MemberCodec.decode(text)).isEqualTo(m);
    }

    @Test
    @DisplayName("MEM-4 non-canonical or oversized member records are refused naming the problem")
    void memberRefusals() {
        String text = MemberCodec.encode(M);
        assertThatThrownBy(() -> MemberCodec.decode(text + "blocks = 1\n"))
                .hasMessageContaining("line 7 must be 'role = requester'");
        assertThatThrownBy(() -> MemberCodec.decode(text + "role = requester\nblocks = 1\n"))
                .hasMessageContaining("exactly 6 lines");
        assertThatThrownBy(() -> MemberCodec.decode(text.replace("node_epoch = 7", "node_epoch = x")))
                .hasMessageContaining("node_epoch");
        assertThatThrownBy(() -> MemberCodec.decode(text.replace("node_epoch = 7", "node_epoch = 07")))
                .hasMessageContaining("not canonical");
        assertThatThrownBy(() -> MemberCodec.decode("x".repeat(MemberCodec.MAX_BYTES + 1)))
                .hasMessageContaining("exceeds 1024 bytes");
    }

    @Test
    @DisplayName("MEM-1 the format record is exactly the two canonical lines")
    void formatRecord() {
        UUID u = UUID.fromString("11111111-2222-3333-4444-555555555555");
        String v = new FormatRecord(u).encode();
        assertThat(v).isEqualTo("protocol = orbitkv/inventory-stream/v4\ncluster_uuid = 11111111-2222-3333-4444-555555555555\n");
        assertThat(FormatRecord.parseCanonicalOrNull(v)).isEqualTo(new FormatRecord(u));
    }

    @Test
    @DisplayName("MEM-3 any other format value is not v4: an old binary's, a padded one, a different protocol")
    void otherFormats() {
        String old = "protocol = orbitkv/etcd-block-publisher/v3\ncluster_uuid = 11111111-2222-3333-4444-555555555555\n";
        assertThat(FormatRecord.parseCanonicalOrNull(old)).isNull();
        assertThat(FormatRecord.clusterUuidLineOrNull(old)).isEqualTo(UUID.fromString("11111111-2222-3333-4444-555555555555"));
        String v4 = FormatRecord.random().encode();
        assertThat(FormatRecord.parseCanonicalOrNull(v4 + "\n")).isNull();
        assertThat(FormatRecord.parseCanonicalOrNull(v4.replace(" = ", "="))).isNull();
        assertThat(FormatRecord.parseCanonicalOrNull(v4.toUpperCase())).isNull();
        assertThat(FormatRecord.parseCanonicalOrNull("v2")).isNull();
    }

    @Test
    @DisplayName("MEM-5 epoch records are canonical and refuse garbage")
    void epochRecord() {
        EpochRecord r = new EpochRecord(9, 1_700_000_000_000L);
        assertThat(r.encode()).isEqualTo("node_epoch = 9\nissued_unix_ms = 1700000000000\n");
        assertThat(EpochRecord.parse(r.encode())).isEqualTo(r);
        assertThat(EpochRecord.parse("9")).isEqualTo(new EpochRecord(9, EpochRecord.UNKNOWN_ISSUE_TIME));
        assertThatThrownBy(() -> EpochRecord.parse("nine")).hasMessageContaining("epoch record must be");
        assertThatThrownBy(() -> EpochRecord.parse("node_epoch = -1\nissued_unix_ms = 0\n")).hasMessageContaining(">= 0");
    }

    @Test
    @DisplayName("MEM-1 MEM-5 key layout: format, epochs/<node>, epochs/@floor, members/<node>, everything else is old")
    void keyKinds() {
        Keys k = new Keys("/orbitkv/v2/c1/");
        assertThat(k.kindOf("/orbitkv/v2/c1/format")).isEqualTo(Keys.Kind.FORMAT);
        assertThat(k.kindOf("/orbitkv/v2/c1/epochs/n1")).isEqualTo(Keys.Kind.EPOCH);
        assertThat(k.kindOf("/orbitkv/v2/c1/epochs/@floor")).isEqualTo(Keys.Kind.EPOCH_FLOOR);
        assertThat(k.kindOf("/orbitkv/v2/c1/members/n1")).isEqualTo(Keys.Kind.MEMBER);
        assertThat(k.kindOf("/orbitkv/v2/c1/blocks/ns/abc")).isEqualTo(Keys.Kind.OTHER);
        assertThat(k.kindOf("/orbitkv/v2/c1/publisher/cursor")).isEqualTo(Keys.Kind.OTHER);
        assertThat(k.kindOf("/orbitkv/v2/c1/members/")).isEqualTo(Keys.Kind.OTHER);
        assertThat(Keys.text(Keys.rangeEnd("/orbitkv/v2/c1/members/"))).isEqualTo("/orbitkv/v2/c1/members0");
        assertThatThrownBy(() -> new NodeId("@floor")).hasMessageContaining("node id may contain only");
    }

    @Test
    @DisplayName("MEM-9 a raw OUT_OF_RANGE read is classified as a compaction gap; NOT_FOUND as a lost lease")
    void classification() {
        var compacted = EtcdCalls.classify(new java.util.concurrent.ExecutionException(
                Status.OUT_OF_RANGE.withDescription("etcdserver: mvcc: required revision has been compacted").asRuntimeException()));
        assertThat(compacted.compacted()).isTrue();
        assertThat(compacted.leaseNotFound()).isFalse();
        var gone = EtcdCalls.classify(Status.NOT_FOUND.withDescription("etcdserver: requested lease not found").asRuntimeException());
        assertThat(gone.leaseNotFound()).isTrue();
        var unavailable = EtcdCalls.classify(Status.UNAVAILABLE.asRuntimeException());
        assertThat(unavailable.compacted() || unavailable.leaseNotFound()).isFalse();
    }

    @Test
    @DisplayName("MEM-8 every wait on etcd has a deadline")
    void awaitTimesOut() {
        assertThatThrownBy(() -> EtcdCalls.await(new CompletableFuture<>(), 20))
                .isInstanceOf(EtcdCalls.EtcdCallFailed.class)
                .hasMessageContaining("timed out after 20 ms")
                .satisfies(e -> assertThat(((EtcdCalls.EtcdCallFailed) e).code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
    }

    @Test
    @DisplayName("IDX-13 views: one incarnation per node id, O(1) isAdmitted, invalid views admit nobody")
    void views() {
        ClusterIdentity c = new ClusterIdentity("c1", UUID.randomUUID());
        AdmittedView v = AdmittedView.valid(c, 10, Map.of(M.nodeId(), M));
        assertThat(v.isAdmitted(M.incarnation())).isTrue();
        assertThat(v.isAdmitted(Incarnation.random(M.nodeId(), new NodeEpoch(7)))).isFalse();
        assertThat(v.isAdmitted(new Incarnation(M.nodeId(), new NodeEpoch(6), M.incarnation().id()))).isFalse();
        assertThat(v.members()).containsExactly(M);
        AdmittedView invalid = AdmittedView.invalid(c, 11);
        assertThat(invalid.isAdmitted(M.incarnation())).isFalse();
        assertThat(invalid.members()).isEmpty();
        assertThat(invalid.valid()).isFalse();
    }
}
