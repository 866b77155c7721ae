package orbitkv.conformance.mutant;

import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
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
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import orbitkv.conformance.peer.RawBytes;
import orbitkv.membership.Endpoint;
import orbitkv.transfer.wire.AuthorizeResponse;
import orbitkv.transfer.wire.ReleaseResponse;
import orbitkv.transfer.wire.TransferAuthorizationGrpc;

/**
 * A loopback gRPC proxy for the transfer authorization service {@code orbitkv.transfer.v1.TransferAuthorization}
 * (issue 40 item 5) in front of one Manager's peer listener: the kit's {@code --target-peer} for its transfer rows.
 * Both unary methods are relayed as raw bytes (grpc-java, Netty); the answers pass through the current
 * {@link TransferMutant}'s rewrite (parsed with the generated classes; an unchanged answer travels as its original
 * bytes). The end of a call (its gRPC status) is relayed as is. Bounded like {@link WireRewriteProxy}: messages of
 * at most {@value WireRewriteProxy#MESSAGE_BYTES_MAX} bytes; gRPC's own flow control bounds calls in flight.
 */
final class AuthorizeRewriteProxy implements AutoCloseable {
    private static final MethodDescriptor<byte[], byte[]> AUTHORIZE =
            TransferAuthorizationGrpc.getAuthorizeMethod().toBuilder(RawBytes.MARSHALLER, RawBytes.MARSHALLER).build();
    private static final MethodDescriptor<byte[], byte[]> RELEASE =
            TransferAuthorizationGrpc.getReleaseMethod().toBuilder(RawBytes.MARSHALLER, RawBytes.MARSHALLER).build();

    private final Server server;
    private final ManagedChannel channel;
    private volatile TransferMutant mutant;

    private AuthorizeRewriteProxy(Endpoint upstream) throws IOException {
        channel = NettyChannelBuilder.forAddress(upstream.host(), upstream.port()).usePlaintext()
                .maxInboundMessageSize(WireRewriteProxy.MESSAGE_BYTES_MAX).build();
        ServerServiceDefinition def = ServerServiceDefinition.builder(TransferAuthorizationGrpc.SERVICE_NAME)
                .addMethod(AUTHORIZE, ServerCalls.asyncUnaryCall((req, out) -> relay(AUTHORIZE, req, out, this::authorized)))
                .addMethod(RELEASE, ServerCalls.asyncUnaryCall((req, out) -> relay(RELEASE, req, out, this::released))).build();
        server = NettyServerBuilder.forAddress(new InetSocketAddress(WireRewriteProxy.LOOPBACK, 0))
                .maxInboundMessageSize(WireRewriteProxy.MESSAGE_BYTES_MAX).addService(def).build().start();
    }

    static AuthorizeRewriteProxy start(Endpoint upstream) throws IOException {
        return new AuthorizeRewriteProxy(Objects.requireNonNull(upstream, "upstream"));
    }

    Endpoint endpoint() {
        return new Endpoint(WireRewriteProxy.LOOPBACK, server.getPort());
    }

    /** Calls from now on are rewritten by {@code mutant} (null: the identity). */
    void rewriteWith(TransferMutant mutant) {
        this.mutant = mutant;
    }

    private byte[] authorized(byte[] raw) throws InvalidProtocolBufferException {
        TransferMutant m = mutant;
        if (m == null) {
            return raw;
        }
        AuthorizeResponse r = AuthorizeResponse.parseFrom(raw);
        AuthorizeResponse out = m.authorized(r);
        return out == r ? raw : out.toByteArray();
    }

    private byte[] released(byte[] raw) throws InvalidProtocolBufferException {
        TransferMutant m = mutant;
        if (m == null) {
            return raw;
        }
        ReleaseResponse r = ReleaseResponse.parseFrom(raw);
        ReleaseResponse out = m.released(r);
        return out == r ? raw : out.toByteArray();
    }

    private interface Rewrite {
        byte[] apply(byte[] raw) throws InvalidProtocolBufferException;
    }

    private void relay(MethodDescriptor<byte[], byte[]> method, byte[] request, StreamObserver<byte[]> out, Rewrite rewrite) {
        ClientCalls.asyncUnaryCall(channel.newCall(method, CallOptions.DEFAULT), request, new StreamObserver<>() {
            @Override
            public void onNext(byte[] answer) {
                try {
                    out.onNext(rewrite.apply(answer));
                } catch (InvalidProtocolBufferException e) {
                    out.onNext(answer); // not an answer the mutant understands: relayed unchanged
                }
            }

            @Override
            public void onError(Throwable t) {
                out.onError(Status.fromThrowable(t).asRuntimeException());
            }

            @Override
            public void onCompleted() {
                out.onCompleted();
            }
        });
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
}
