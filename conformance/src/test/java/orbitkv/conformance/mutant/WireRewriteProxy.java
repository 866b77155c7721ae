package orbitkv.conformance.mutant;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import orbitkv.conformance.peer.RawBytes;
import orbitkv.inventory.wire.InventorySessionGrpc;
import orbitkv.membership.Endpoint;

/**
 * A loopback gRPC proxy for the InventorySession method that stands in front of one source listener: a
 * requester dials the proxy, the proxy opens the same stream to {@code upstream} and relays every message
 * both ways through a {@link StreamRewrite} (a mutant's, or the identity). HTTP/2 and gRPC framing are
 * grpc-java's (Netty transport, uncompressed length-prefixed messages); the proxy sees whole messages as
 * bytes ({@link RawBytes}) and the rewrite parses them with the generated protobuf classes. The end of a
 * stream (its completion, or its gRPC status) is relayed as is.
 *
 * <p>Bounds: a message of at most {@value #MESSAGE_BYTES_MAX} bytes either way (far above every bound the
 * kit probes, so the target's own bound decides); at most {@value #STREAMS_MAX} relayed streams at once,
 * beyond which a stream is refused with {@code RESOURCE_EXHAUSTED}.
 */
final class WireRewriteProxy implements AutoCloseable {
    static final int MESSAGE_BYTES_MAX = 64 << 20;
    static final int STREAMS_MAX = 256;
    /** The only address the proxy binds (loopback traffic only). */
    static final String LOOPBACK = "127.0.0.1";

    private final Server server;
    private final ManagedChannel channel;
    private volatile Supplier<StreamRewrite> rewrites = StreamRewrite::identity;
    private final java.util.concurrent.Semaphore streams = new java.util.concurrent.Semaphore(STREAMS_MAX);

    private WireRewriteProxy(Endpoint upstream) throws IOException {
        channel = NettyChannelBuilder.forAddress(upstream.host(), upstream.port()).usePlaintext()
                .maxInboundMessageSize(MESSAGE_BYTES_MAX).build();
        ServerServiceDefinition def = ServerServiceDefinition.builder(InventorySessionGrpc.SERVICE_NAME)
                .addMethod(RawBytes.METHOD, ServerCalls.asyncBidiStreamingCall(this::relay)).build();
        server = NettyServerBuilder.forAddress(new InetSocketAddress(LOOPBACK, 0))
                .maxInboundMessageSize(MESSAGE_BYTES_MAX).addService(def).build().start();
    }

    /** A proxy on a free loopback port relaying to {@code upstream}. */
    static WireRewriteProxy start(Endpoint upstream) throws IOException {
        return new WireRewriteProxy(Objects.requireNonNull(upstream, "upstream"));
    }

    /** Where requesters dial the proxy. */
    Endpoint endpoint() {
        return new Endpoint(LOOPBACK, server.getPort());
    }

    /** Streams opened from now on use a fresh rewrite from {@code rewrites}; open streams keep theirs. */
    void rewriteWith(Supplier<StreamRewrite> rewrites) {
        this.rewrites = Objects.requireNonNull(rewrites, "rewrites");
    }

    private StreamObserver<byte[]> relay(StreamObserver<byte[]> toRequester) {
        if (!streams.tryAcquire()) {
            toRequester.onError(Status.RESOURCE_EXHAUSTED.withDescription("rewrite proxy: more than " + STREAMS_MAX
                    + " streams").asRuntimeException());
            return new Ignoring();
        }
        StreamRewrite rewrite = rewrites.get();
        StreamObserver<byte[]> toSource = ClientCalls.asyncBidiStreamingCall(channel.newCall(RawBytes.METHOD, CallOptions.DEFAULT),
                new StreamObserver<byte[]>() {
                    @Override
                    public void onNext(byte[] message) {
                        quietly(() -> rewrite.toRequester(message).forEach(toRequester::onNext));
                    }

                    @Override
                    public void onError(Throwable t) {
                        streams.release();
                        quietly(() -> toRequester.onError(Status.fromThrowable(t).asRuntimeException()));
                    }

                    @Override
                    public void onCompleted() {
                        streams.release();
                        quietly(toRequester::onCompleted);
                    }
                });
        return new StreamObserver<>() {
            @Override
            public void onNext(byte[] message) {
                quietly(() -> rewrite.toSource(message).forEach(toSource::onNext));
            }

            @Override
            public void onError(Throwable t) {
                quietly(() -> toSource.onError(Status.fromThrowable(t).asRuntimeException()));
            }

            @Override
            public void onCompleted() {
                quietly(toSource::onCompleted);
            }
        };
    }

    /** A relay step toward a side that already ended its stream has nowhere to go: it is dropped. */
    private static void quietly(Runnable step) {
        try {
            step.run();
        } catch (IllegalStateException | io.grpc.StatusRuntimeException ended) {
            // the other side's call is already closed or cancelled
        }
    }

    private static final class Ignoring implements StreamObserver<byte[]> {
        @Override
        public void onNext(byte[] value) {}

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
}
