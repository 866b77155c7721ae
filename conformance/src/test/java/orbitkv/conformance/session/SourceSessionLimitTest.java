package orbitkv.conformance.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import orbitkv.conformance.peer.AdversarialRequester;
import orbitkv.conformance.peer.StaticMembership;
import orbitkv.conformance.peer.WireFrames;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySessionServer;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.SessionLimitRefusals;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 33 finding "--source-sessions-max below the number of peers leaves a peer PartialHints forever with no log
 * line": the source refused the Open of a current member with SESSION_LIMIT and said nothing anywhere but a debug
 * line and one cause counter. Now each such member is listed from its first refusal (logged once, counted as an
 * episode) until a session of it is admitted or it leaves the view; the Manager shows the list in /health
 * (degraded) and status (BND-3: members beyond the limit are never skipped silently).
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SourceSessionLimitTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final ClusterIdentity CLUSTER = SessionWorld.CLUSTER;
    private static final Namespace NS = Namespace.utf8("ns-a");
    private final Incarnation self = inc("src", 5);
    private final Incarnation first = inc("req-1", 1);
    private final Incarnation second = inc("req-2", 1);

    @Test
    @DisplayName("BND-3 issue 33 a source-sessions-max below the peers: the refused current member is listed and counted once per episode, until served or gone")
    void sourceSessionsMaxBelowPeersIsListedNotSilent() throws Exception {
        InventorySource source = InventorySource.create(InventoryConfig.defaults());
        source.put(new StateKey(NS, new byte[] {1}), Medium.DRAM, 100);
        AtomicReference<StaticMembership> view = new AtomicReference<>(view(3, self, first, second));
        InventorySessionServer server = InventorySessionServer.create(source, CLUSTER, self, view::get,
                SessionConfig.defaults().withSessionLimits(128, 1));
        Server grpc = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(server.bindableService()).build().start();
        try (AdversarialRequester peer = AdversarialRequester.connect(new Endpoint("127.0.0.1", grpc.getPort()))) {
            AdversarialRequester.Session served = peer.open();
            assertThat(open(served, first).hasAccepted()).as("the first requester fills the one session").isTrue();
            assertThat(server.sessionLimitRefusals()).isEqualTo(SessionLimitRefusals.NONE);

            for (int retry = 0; retry < 3; retry++) { // the refused requester retries with backoff: one episode
                SourceFrame refused = open(peer.open(), second);
                assertThat(refused.hasError()).isTrue();
                assertThat(refused.getError().getCause().name()).isEqualTo("SESSION_LIMIT");
                assertThat(server.sessionLimitRefusals()).as("after refusal %d", retry + 1)
                        .isEqualTo(new SessionLimitRefusals(List.of(second), 1, 0));
            }

            view.set(view(4, self, first)); // the refused member leaves: its episode ends
            server.onMembership(view.get());
            assertThat(server.sessionLimitRefusals().members()).isEmpty();
            view.set(view(5, self, first, second)); // it comes back and is refused again: a second episode
            server.onMembership(view.get());
            assertThat(open(peer.open(), second).getError().getCause().name()).isEqualTo("SESSION_LIMIT");
            assertThat(server.sessionLimitRefusals()).isEqualTo(new SessionLimitRefusals(List.of(second), 2, 0));

            served.complete(); // the served session ends: the limit has room, the refused member is served
            SessionWorld.await("the first session ended", WAIT, () -> server.status().isEmpty());
            assertThat(open(peer.open(), second).hasAccepted()).isTrue();
            assertThat(server.sessionLimitRefusals()).isEqualTo(new SessionLimitRefusals(List.of(), 2, 0));
        } finally {
            server.close();
            grpc.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private SourceFrame open(AdversarialRequester.Session s, Incarnation requester) throws InterruptedException {
        UUID sid = UUID.randomUUID();
        s.send(RequesterFrame.newBuilder().setSessionId(WireFrames.uuid(sid))
                .setOpen(WireFrames.open(CLUSTER, self, requester, Scope.of(List.of(NS)), sid)).build());
        return s.nextFrame(WAIT);
    }

    private static StaticMembership view(long revision, Incarnation... members) {
        return StaticMembership.of(CLUSTER, revision, java.util.Arrays.stream(members).map(SourceSessionLimitTest::member).toList());
    }

    private static Incarnation inc(String node, long epoch) {
        return new Incarnation(new NodeId(node), new NodeEpoch(epoch), UUID.randomUUID());
    }

    private static Member member(Incarnation i) {
        return StaticMembership.member(i, new Endpoint("127.0.0.1", 1));
    }
}
