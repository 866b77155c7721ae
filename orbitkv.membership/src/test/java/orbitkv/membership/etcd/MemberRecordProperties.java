package orbitkv.membership.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.AlphaChars;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.StringLength;

class MemberRecordProperties {
    @Property(tries = 500, seed = "4242")
    @Label("MEM-4 member records round-trip exactly and stay within 1024 bytes")
    void memberRoundTrip(@ForAll @LongRange(min = 1) long epoch, @ForAll @IntRange(min = 1, max = 65535) int port,
                         @ForAll @AlphaChars @StringLength(min = 1, max = 64) String node) {
        Member m = new Member(Incarnation.random(new NodeId(node), new NodeEpoch(epoch)),
                new Endpoint("host-" + node, port), new Endpoint("c", 65536 - port), ClusterIdentity.PROTOCOL);
        String text = MemberCodec.encode(m);
        assertThat(text.length()).isLessThanOrEqualTo(MemberCodec.MAX_BYTES);
        assertThat(MemberCodec.decode(text)).isEqualTo(m);
    }
}
