package orbitkv.server.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import orbitkv.membership.Endpoint;
import orbitkv.server.config.ListenAddress;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class PeerListenerTest {
    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };
    private static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("orbitkv.test.Echo/Echo")
            .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();

    @Test
    @DisplayName("SES-1 the peer listener serves gRPC on the native transport; a service added after start is served, before it UNIMPLEMENTED")
    void servicesAddedAfterStart() throws Exception {
        NativeTransport transport = NativeTransport.detect();
        PeerListener listener = PeerListener.start(new ListenAddress("127.0.0.1", 0), transport, Optional.empty(), 1 << 20);
        PeerChannels channels = new PeerChannels(transport, Optional.empty(), 1 << 20);
        ManagedChannel channel = channels.open(new Endpoint("127.0.0.1", listener.boundAddress().getPort()));
        try {
            assertThatThrownBy(() -> call(channel, "before"))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
            listener.addService(() -> ServerServiceDefinition.builder("orbitkv.test.Echo")
                    .addMethod(ECHO, ServerCalls.asyncUnaryCall((req, out) -> {
                        out.onNext(req);
                        out.onCompleted();
                    })).build());
            assertThat(new String(call(channel, "after"))).isEqualTo("after");
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            channels.close();
            listener.close();
        }
    }

    private static byte[] call(ManagedChannel channel, String text) {
        return ClientCalls.blockingUnaryCall(channel, ECHO, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
                text.getBytes());
    }
}
