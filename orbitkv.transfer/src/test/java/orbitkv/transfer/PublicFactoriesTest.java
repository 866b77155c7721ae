package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.Medium;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.testing.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The exported factories as the Manager calls them: a {@link TransferTransport} instead of Netty types, event
 * loops built and owned by the transfer module (named {@code orbitkv-transfer-*}) and stopped by {@code close()}.
 * One DRAM and one SSD block travel over TCP through the public contract only.
 */
@Tag("unit")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PublicFactoriesTest {
    @ParameterizedTest
    @EnumSource(TransferTransport.class)
    @DisplayName("TransferSource.start / TransferEngine.create on each transport: READ works; close stops the owned event loops")
    void factoriesOwnTheirEventLoops(TransferTransport transport) throws Exception {
        assertThat(transport.isAvailable()).as(transport + " must be available on this host (no skip)").isTrue();
        ClusterIdentity cluster = new ClusterIdentity("factories", UUID.randomUUID());
        Incarnation src = Incarnation.random(new NodeId("src"), new NodeEpoch(1));
        Incarnation req = Incarnation.random(new NodeId("req"), new NodeEpoch(1));
        TestMembership membership = new TestMembership(cluster, src, req);
        Path dir = Files.createTempDirectory("orbitkv-factories");
        TransferConfig config = TransferFixture.testConfig().withEventLoops(1, 1);
        try (TestPayloadSource payloads = new TestPayloadSource(TestPayloadSource.sharedMemoryDir(dir), 8L << 20, dir, 100);
                Arena arena = Arena.ofShared()) {
            byte[] dram = TransferFixture.payload(70_000, 1, 0);
            byte[] ssd = TransferFixture.payload(50_000, 1, 1);
            long s0 = payloads.putDram(TransferFixture.key(0), dram);
            long s1 = payloads.putSsd(TransferFixture.key(1), ssd);
            TransferSource source = TransferSource.start(payloads, cluster, src, membership, config,
                    new InetSocketAddress("127.0.0.1", 0), transport);
            Server grpc = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                    .addService(source.authorizationService()).build().start();
            int port = ((InetSocketAddress) grpc.getListenSockets().getFirst()).getPort();
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
            TransferEngine engine = TransferEngine.create(config, cluster, () -> req, e -> channel, transport);
            assertThat(threads("orbitkv-transfer-source")).isPositive();
            assertThat(threads("orbitkv-transfer-requester")).isZero(); // created lazily by the first connection
            try {
                Member member = new Member(src, new Endpoint("127.0.0.1", port), new Endpoint("127.0.0.1", 1),
                        "orbitkv/inventory-stream/v4");
                AuthorizeOutcome o = engine.authorize(new GrantRequest(member, Intent.FOREGROUND,
                        List.of(new BlockRef(TransferFixture.key(0), Medium.DRAM, s0),
                                new BlockRef(TransferFixture.key(1), Medium.SSD, s1)),
                        Duration.ofSeconds(5))).toCompletableFuture().get(10, TimeUnit.SECONDS);
                assertThat(o).isInstanceOf(AuthorizeOutcome.Granted.class);
                Grant g = ((AuthorizeOutcome.Granted) o).grant();
                byte[][] expected = {dram, ssd};
                for (int i = 0; i < 2; i++) {
                    MemorySegment dst = TransferFixture.destination(arena, expected[i].length);
                    ReadResult r = TransferFixture.await(engine.read(g, i, Destination.of(dst), BackendPolicy.TCP_ONLY,
                            Duration.ofSeconds(10)));
                    assertThat(r).isInstanceOf(ReadResult.Completed.class);
                    assertThat(dst.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).isEqualTo(expected[i]);
                }
                assertThat(TransferFixture.await(engine.release(g))).isInstanceOf(ReleaseOutcome.Released.class);
                assertThat(threads("orbitkv-transfer-requester")).isPositive();
            } finally {
                engine.close();
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                grpc.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                source.close();
            }
            Await.inJvm("the transfer event loops stop on close", Duration.ofSeconds(10),
                    () -> threads("orbitkv-transfer-") == 0);
        }
    }

    private static long threads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }
}
