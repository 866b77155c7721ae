package orbitkv.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import orbitkv.inventory.Medium;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.testing.Await;
import orbitkv.transfer.frame.WireCodec;
import orbitkv.transfer.requester.ChunkCopier;
import orbitkv.transfer.requester.Engine;
import orbitkv.transfer.wire.AuthorizeResponse;
import orbitkv.transfer.wire.RequestRefusal;
import orbitkv.transfer.wire.SourceLoad.Builder;
import orbitkv.transfer.wire.TransferAuthorizationGrpc;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The source load summary on Authorize answers (ROUTE-9; docs/transfer.md "Load summary"): the source reports
 * peaks over a tumbling window on its own clock, measured by the answering incarnation; the requester checks
 * each summary apart from the answer, drops and counts a malformed one, and never lets it change the outcome.
 */
@Tag("unit")
class LoadSummaryTest {
    /** The refusals that carry no summary (docs/transfer.md); {@link AuthorizeBadInputTest} checks every reason. */
    static final Set<RefusalReason> REFUSALS_WITHOUT_LOAD = EnumSet.of(RefusalReason.PROTOCOL_MISMATCH,
            RefusalReason.CLUSTER_MISMATCH, RefusalReason.MALFORMED_REQUEST, RefusalReason.REQUEST_TOO_LARGE,
            RefusalReason.SOURCE_FENCED, RefusalReason.SHUTTING_DOWN, RefusalReason.MEMBERSHIP_SUSPENDED);

    @Test
    @DisplayName("ROUTE-9 the summary reports the window's peaks on the source's clock, and a new window starts from zero")
    void peaksOverTheWindow() throws IOException {
        AtomicLong now = new AtomicLong(TimeUnit.SECONDS.toNanos(100));
        try (TransferFixture f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect())
                .withSourceClock(now::get))) {
            long seq = f.payloads.putDram(TransferFixture.key(1), TransferFixture.payload(1000, 1, 1));
            AuthorizeOutcome granted = f.authorize(Intent.FOREGROUND,
                    List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, seq)));
            assertThat(granted).isInstanceOf(AuthorizeOutcome.Granted.class);
            assertThat(granted.load()).contains(new SourceLoad(f.sourceIncarnation, 1, 1, 1000, 0));

            TransferFixture.await(f.engine.release(((AuthorizeOutcome.Granted) granted).grant()));
            Await.inJvm("pins released", Duration.ofSeconds(10), () -> f.source.status().pinsHeld() == 0);
            now.addAndGet(TimeUnit.MILLISECONDS.toNanos(500));
            AuthorizeOutcome sameWindow = f.authorize(Intent.FOREGROUND,
                    List.of(new BlockRef(TransferFixture.key(2), Medium.DRAM, 1)));
            assertThat(sameWindow).isInstanceOf(AuthorizeOutcome.NothingGranted.class);
            assertThat(sameWindow.load()).as("the released grant is still the window's peak")
                    .contains(new SourceLoad(f.sourceIncarnation, 500, 1, 1000, 0));

            now.addAndGet(TimeUnit.MILLISECONDS.toNanos(600));
            AuthorizeOutcome nextWindow = f.authorize(Intent.FOREGROUND,
                    List.of(new BlockRef(TransferFixture.key(2), Medium.DRAM, 1)));
            assertThat(nextWindow.load()).as("a window of 1,000 ms ended: the peaks start again")
                    .contains(new SourceLoad(f.sourceIncarnation, 1, 0, 0, 0));
            assertThat(f.engine.status().loadSummariesReceived()).isEqualTo(3);
            assertThat(f.engine.status().loadSummariesRejected()).isZero();
        }
    }

    @Test
    @DisplayName("ROUTE-9 a refusal naming another incarnation carries the load measured by the answering one")
    void refusalCarriesTheAnsweringIncarnation() throws IOException {
        try (TransferFixture f = new TransferFixture(TransferFixture.Options.defaults(NativeIo.detect()))) {
            Incarnation older = new Incarnation(f.sourceIncarnation.nodeId(), new NodeEpoch(2), UUID.randomUUID());
            Member stale = new Member(older, f.sourceMember.peer(), f.sourceMember.control(), f.sourceMember.protocol());
            AuthorizeOutcome o = f.engine.authorize(new GrantRequest(stale, Intent.FOREGROUND,
                    List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, 1)), Duration.ofSeconds(5)))
                    .toCompletableFuture().orTimeout(10, TimeUnit.SECONDS).join();
            assertThat(o).isInstanceOfSatisfying(AuthorizeOutcome.Refused.class,
                    r -> assertThat(r.reason()).isEqualTo(RefusalReason.STALE_SOURCE_INCARNATION));
            assertThat(o.load()).hasValueSatisfying(l -> assertThat(l.measuredBy()).isEqualTo(f.sourceIncarnation));
        }
    }

    private static Arguments row(String name, UnaryOperator<Builder> forge) {
        return Arguments.of(name, forge);
    }

    static Stream<Arguments> malformed() {
        return Stream.of(
                row("measured by another node", b -> b.setMeasuredBy(WireCodec.incarnation(
                        Incarnation.random(new NodeId("other"), new NodeEpoch(1))))),
                row("measured_by missing", Builder::clearMeasuredBy),
                row("measured_by epoch 0", b -> b.setMeasuredBy(b.getMeasuredBy().toBuilder().setNodeEpoch(0))),
                row("window 0 ms", b -> b.setWindowMs(0)),
                row("window 60,001 ms", b -> b.setWindowMs(60_001)),
                row("window overflows (2^64-1)", b -> b.setWindowMs(-1)),
                row("grants above 2^31-1", b -> b.setGrantsOutstanding(-1)),
                row("pinned bytes above 2^63-1", b -> b.setPinnedBytes(Long.MIN_VALUE)),
                row("egress bytes above 2^63-1", b -> b.setEgressQueuedBytes(-5)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    @DisplayName("ROUTE-9 BND-1 a malformed summary is dropped and counted; the answer it came with stands")
    void malformedSummaryIsDropped(String name, UnaryOperator<Builder> forge) throws IOException, InterruptedException {
        try (ForgingSource s = new ForgingSource()) {
            Builder valid = WireCodec.load(new SourceLoad(s.source, 250, 3, 4096, 512)).toBuilder();
            AuthorizeResponse.Builder answer = AuthorizeResponse.newBuilder().setRefused(RequestRefusal.newBuilder()
                    .setReason(orbitkv.transfer.wire.RefusalReason.TOO_MANY_KEYS).setDetail("forged"));

            s.answer.set(answer.setLoad(valid).build());
            assertThat(s.authorize().load()).as("the unforged summary is accepted")
                    .contains(new SourceLoad(s.source, 250, 3, 4096, 512));

            s.answer.set(answer.setLoad(forge.apply(valid.clone())).build());
            AuthorizeOutcome o = s.authorize();
            assertThat(o).as(name).isInstanceOfSatisfying(AuthorizeOutcome.Refused.class,
                    r -> assertThat(r.reason()).isEqualTo(RefusalReason.TOO_MANY_KEYS));
            assertThat(o.load()).as(name).isEmpty();
            assertThat(s.engine.status().loadSummariesReceived()).isEqualTo(1);
            assertThat(s.engine.status().loadSummariesRejected()).as(name).isEqualTo(1);
        }
    }

    /** A gRPC server that answers every Authorize with a forged response, and an engine pointed at it. */
    private static final class ForgingSource implements AutoCloseable {
        final AtomicReference<AuthorizeResponse> answer = new AtomicReference<>();
        final Incarnation source = Incarnation.random(new NodeId("source-a"), new NodeEpoch(3));
        final Incarnation requester = Incarnation.random(new NodeId("requester-b"), new NodeEpoch(5));
        final NativeIo io = NativeIo.detect();
        final EventLoopGroup group = io.newGroup(1);
        final Server server;
        final ManagedChannel channel;
        final Engine engine;
        final Member member;

        ForgingSource() throws IOException {
            ServerServiceDefinition def = ServerServiceDefinition.builder(TransferAuthorizationGrpc.SERVICE_NAME)
                    .addMethod(TransferAuthorizationGrpc.getAuthorizeMethod(), ServerCalls.asyncUnaryCall((req, out) -> {
                        out.onNext(answer.get());
                        out.onCompleted();
                    }))
                    .addMethod(TransferAuthorizationGrpc.getReleaseMethod(), ServerCalls.asyncUnaryCall((req, out) ->
                            out.onError(Status.UNIMPLEMENTED.asRuntimeException())))
                    .build();
            server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).channelType(io.serverChannel())
                    .bossEventLoopGroup(group).workerEventLoopGroup(group).addService(def).build().start();
            int port = ((InetSocketAddress) server.getListenSockets().getFirst()).getPort();
            channel = NettyChannelBuilder.forAddress("127.0.0.1", port).channelType(io.socketChannel())
                    .eventLoopGroup(group).usePlaintext().build();
            member = new Member(source, new Endpoint("127.0.0.1", port), new Endpoint("127.0.0.1", 1),
                    "orbitkv/inventory-stream/v4");
            engine = Engine.createForTest(TransferFixture.testConfig(),
                    new orbitkv.membership.ClusterIdentity("load-test", UUID.randomUUID()), () -> requester, e -> channel,
                    group, io.socketChannel(), System::nanoTime, UUID.randomUUID(), ChunkCopier.PLAIN);
        }

        AuthorizeOutcome authorize() {
            return engine.authorize(new GrantRequest(member, Intent.FOREGROUND,
                    List.of(new BlockRef(TransferFixture.key(1), Medium.DRAM, 1)), Duration.ofSeconds(5)))
                    .toCompletableFuture().orTimeout(10, TimeUnit.SECONDS).join();
        }

        @Override
        public void close() throws InterruptedException {
            engine.close();
            channel.shutdownNow();
            server.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
            server.awaitTermination(5, TimeUnit.SECONDS);
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }
}
