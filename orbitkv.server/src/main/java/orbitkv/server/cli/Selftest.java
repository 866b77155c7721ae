package orbitkv.server.cli;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.wire.InventorySessionGrpc;
import orbitkv.inventory.wire.Liveness;
import orbitkv.inventory.wire.Open;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.wire.Uuid;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.Membership;
import orbitkv.server.net.NativeTransport;

/** The checks behind {@code orbitkv selftest}; each prints one line {@code ok <check>: <detail>}. */
final class Selftest {
    private final PrintStream out;
    private final long timeoutMs;

    Selftest(PrintStream out, long timeoutMs) {
        this.out = out;
        this.timeoutMs = timeoutMs;
    }

    int run() throws Exception {
        checkNamedModule();
        checkProtobufReflection();
        NativeTransport transport = NativeTransport.detect();
        out.println("ok netty-native-transport: " + transport.name());
        checkGrpcRoundTrip(transport);
        checkJetcdClient();
        out.println("selftest passed");
        return 0;
    }

    private void checkNamedModule() {
        Module m = Selftest.class.getModule();
        if (!m.isNamed()) {
            throw new IllegalStateException("orbitkv.server runs in the unnamed module: not a module-path launch");
        }
        out.println("ok module: " + m.getName() + " in a layer of " + ModuleLayer.boot().modules().size() + " modules");
    }

    private void checkProtobufReflection() {
        Open open = Open.newBuilder().setProtocol(ClusterIdentity.PROTOCOL).setSessionId(uuid(UUID.randomUUID())).build();
        String text = open.toString(); // reflection over the generated descriptor
        if (!text.contains(ClusterIdentity.PROTOCOL)) {
            throw new IllegalStateException("protobuf toString lost the protocol field: " + text);
        }
        out.println("ok protobuf-reflection: Open.toString() has " + text.lines().count() + " lines");
    }

    private void checkGrpcRoundTrip(NativeTransport transport) throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, transport.handler());
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .bossEventLoopGroup(group).workerEventLoopGroup(group)
                .channelType(transport.serverChannel())
                .addService(new EchoService())
                .build().start();
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
                .eventLoopGroup(group).channelType(transport.clientChannel())
                .usePlaintext().build();
        try {
            UUID sessionId = UUID.randomUUID();
            CompletableFuture<SourceFrame> reply = new CompletableFuture<>();
            StreamObserver<RequesterFrame> requests = InventorySessionGrpc.newStub(channel)
                    .withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS)
                    .session(new StreamObserver<>() {
                        @Override public void onNext(SourceFrame f) { reply.complete(f); }
                        @Override public void onError(Throwable t) { reply.completeExceptionally(t); }
                        @Override public void onCompleted() { reply.completeExceptionally(new IllegalStateException("no reply")); }
                    });
            requests.onNext(RequesterFrame.newBuilder().setSessionId(uuid(sessionId))
                    .setOpen(Open.newBuilder().setProtocol(ClusterIdentity.PROTOCOL)).build());
            SourceFrame frame = reply.get(timeoutMs, TimeUnit.MILLISECONDS);
            requests.onCompleted();
            if (!frame.getSessionId().equals(uuid(sessionId)) || frame.getFrameNumber() != 1) {
                throw new IllegalStateException("gRPC echo returned a different session or frame: " + frame);
            }
            out.println("ok grpc-bidi-roundtrip: 127.0.0.1:" + server.getPort() + " over " + transport.name());
        } finally {
            channel.shutdownNow().awaitTermination(timeoutMs, TimeUnit.MILLISECONDS);
            server.shutdownNow().awaitTermination(timeoutMs, TimeUnit.MILLISECONDS);
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).await(timeoutMs);
        }
    }

    private void checkJetcdClient() {
        // Construction does not connect: this proves jetcd, Vert.x and grpc resolve as named modules.
        Membership.checkClientConstruction(EtcdEndpoints.parse("http://127.0.0.1:2379"));
        out.println("ok jetcd-client: constructed and closed");
    }

    static Uuid uuid(UUID u) {
        return Uuid.newBuilder().setMsb(u.getMostSignificantBits()).setLsb(u.getLeastSignificantBits()).build();
    }

    /** Transport check only: answers the first frame with a Liveness frame on the same session. */
    private static final class EchoService extends InventorySessionGrpc.InventorySessionImplBase {
        @Override
        public StreamObserver<RequesterFrame> session(StreamObserver<SourceFrame> replies) {
            return new StreamObserver<>() {
                @Override public void onNext(RequesterFrame f) {
                    replies.onNext(SourceFrame.newBuilder().setSessionId(f.getSessionId()).setFrameNumber(1)
                            .setLiveness(Liveness.newBuilder().setSourceHead(0)).build());
                }
                @Override public void onError(Throwable t) {}
                @Override public void onCompleted() { replies.onCompleted(); }
            };
        }
    }
}
