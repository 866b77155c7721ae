package orbitkv.membership.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MemberRole;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.testing.SeededTries;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class MemberRecordProperties {
    private static final String ALPHA = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

    record Input(long epoch, int port, String node, boolean requester) {}

    @Test
    @DisplayName("MEM-4 MEM-11 member records (serving or requester-only) round-trip exactly and stay within 1024 bytes (500 seeded tries)")
    void memberRoundTrip() {
        SeededTries.run("memberRoundTrip", 500, 4242L, g -> {
            StringBuilder node = new StringBuilder();
            for (int i = g.intIn(1, 64); i > 0; i--) {
                node.append(ALPHA.charAt(g.intIn(0, ALPHA.length() - 1)));
            }
            return new Input(g.longIn(1, Long.MAX_VALUE), g.intIn(1, 65535), node.toString(), g.intIn(0, 1) == 1);
        }, in -> {
            Member m = new Member(Incarnation.random(new NodeId(in.node()), new NodeEpoch(in.epoch())),
                    new Endpoint("host-" + in.node(), in.port()), new Endpoint("c", 65536 - in.port()), ClusterIdentity.PROTOCOL,
                    in.requester() ? MemberRole.REQUESTER : MemberRole.SERVING);
            String text = MemberCodec.encode(m);
            assertThat(text.length()).isLessThanOrEqualTo(MemberCodec.MAX_BYTES);
            assertThat(MemberCodec.decode(text)).isEqualTo(m);
        });
    }
}
