package orbitkv.inventory.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.Open;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.ScopeSpec;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 33: under peer mutual TLS an InventorySession Open whose requester names another node than the caller's
 * certificate (the peer listener's {@code PeerIdentity} context) is refused {@code REQUESTER_IDENTITY_MISMATCH}
 * before any session state exists; without TLS (no certified node) the Open is checked as before.
 */
@Tag("unit")
class OpenIdentityTest {
    private final ClusterIdentity cluster = new ClusterIdentity("c1", UUID.randomUUID());
    private final Incarnation self = Incarnation.random(new NodeId("source-a"), new NodeEpoch(1));
    private final Incarnation requester = Incarnation.random(new NodeId("member-b"), new NodeEpoch(1));

    /** A valid view admitting the source and the requester. */
    private final MembershipView view = new MembershipView() {
        @Override
        public ClusterIdentity cluster() {
            return cluster;
        }

        @Override
        public long revision() {
            return 1;
        }

        @Override
        public boolean valid() {
            return true;
        }

        @Override
        public Collection<Member> members() {
            return List.of();
        }

        @Override
        public Optional<Member> member(NodeId nodeId) {
            return Optional.empty();
        }

        @Override
        public boolean isAdmitted(Incarnation incarnation) {
            return incarnation.equals(self) || incarnation.equals(requester);
        }
    };

    private RequesterFrame open() {
        UUID session = UUID.randomUUID();
        Open open = Open.newBuilder().setProtocol(ClusterIdentity.PROTOCOL).setClusterUuid(Wire.uuid(cluster.uuid()))
                .setSessionId(Wire.uuid(session)).setSource(Wire.ref(self)).setRequester(Wire.ref(requester))
                .setScope(ScopeSpec.newBuilder().setAll(orbitkv.inventory.wire.AllNamespaces.getDefaultInstance()))
                .setScopeDigest(com.google.protobuf.ByteString.copyFrom(Scope.all().digest().bytes())).build();
        return RequesterFrame.newBuilder().setSessionId(Wire.uuid(session)).setOpen(open).build();
    }

    @Test
    @DisplayName("issue 33 any certificate from the cluster CA can pose as any member: an Open claiming another member than the caller's certificate names is REQUESTER_IDENTITY_MISMATCH")
    void openRefusesAnotherMembersIdentity() {
        SessionConfig config = SessionConfig.defaults();
        OpenCheck.Result posed = OpenCheck.check(open(), cluster, self, view, config, Optional.of(new NodeId("intruder-c")));
        assertThat(posed).isInstanceOfSatisfying(OpenCheck.Refused.class, r -> {
            assertThat(r.refusal().cause()).isEqualTo(ErrorCause.REQUESTER_IDENTITY_MISMATCH);
            assertThat(r.refusal().detail()).contains("member-b").contains("intruder-c");
        });
        assertThat(OpenCheck.check(open(), cluster, self, view, config, Optional.of(new NodeId("member-b"))))
                .as("the certificate's own node").isInstanceOf(OpenCheck.Accepted.class);
        assertThat(OpenCheck.check(open(), cluster, self, view, config, Optional.empty()))
                .as("no TLS: checked as before").isInstanceOf(OpenCheck.Accepted.class);
    }
}
