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
import orbitkv.inventory.PeerIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.NodeId;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import orbitkv.server.config.ListenAddress;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.config.PeerTls;
import orbitkv.server.config.RawValues;
import orbitkv.server.config.Setting;
import orbitkv.testing.TestCerts;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@Tag("unit")
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

    @Test
    @DisplayName("issue 24.4: an inline service's handler runs on the event loop that received the call; any other service's on grpc-java's executor")
    void inlineServiceRunsOnTheEventLoop() throws Exception {
        NativeTransport transport = NativeTransport.detect();
        PeerListener listener = PeerListener.start(new ListenAddress("127.0.0.1", 0), transport, Optional.empty(), 1 << 20);
        PeerChannels channels = new PeerChannels(transport, Optional.empty(), 1 << 20);
        ManagedChannel channel = channels.open(new Endpoint("127.0.0.1", listener.boundAddress().getPort()));
        MethodDescriptor<byte[], byte[]> inlineMethod = ECHO.toBuilder().setFullMethodName("orbitkv.test.Inline/Echo").build();
        try {
            listener.addService(() -> threadName(ECHO));
            listener.addInlineService(() -> threadName(inlineMethod));
            String pooled = new String(ClientCalls.blockingUnaryCall(channel, ECHO,
                    CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), new byte[0]));
            assertThat(pooled).as("a regular service's handler thread").startsWith("grpc-default-executor");
            // grpc-java picks a call's executor in a task on its default executor; a call whose half-close was
            // queued before the switch can still be drained there (seen once in CI). So of several calls, the
            // inline ones must run on the event loop, and a broken supplier (never inline) fails every one.
            java.util.List<String> inline = new java.util.ArrayList<>();
            for (int i = 0; i < 20; i++) {
                inline.add(new String(ClientCalls.blockingUnaryCall(channel, inlineMethod,
                        CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), new byte[0])));
            }
            assertThat(inline).as("an inline service's handler threads, of 20 calls")
                    .anySatisfy(t -> assertThat(t).endsWith("/event-loop"))
                    .allSatisfy(t -> assertThat(t).matches(".*/event-loop|grpc-default-executor.*"));
            assertThat(inline.stream().filter(t -> t.endsWith("/event-loop")).count()).as("mostly on the event loop")
                    .isGreaterThanOrEqualTo(15);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            channels.close();
            listener.close();
        }
    }

    /** A service that answers with the handler thread's name, and "/event-loop" when that thread is a Netty event loop. */
    private static ServerServiceDefinition threadName(MethodDescriptor<byte[], byte[]> method) {
        return ServerServiceDefinition.builder(method.getServiceName())
                .addMethod(method, ServerCalls.asyncUnaryCall((req, out) -> {
                    Thread t = Thread.currentThread();
                    boolean loop = t instanceof io.netty.util.concurrent.FastThreadLocalThread f && !f.permitBlockingCalls();
                    out.onNext((t.getName() + (loop ? "/event-loop" : "")).getBytes());
                    out.onCompleted();
                })).build();
    }

    private static ServerServiceDefinition echo() {
        return ServerServiceDefinition.builder("orbitkv.test.Echo")
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((req, out) -> {
                    out.onNext(req);
                    out.onCompleted();
                })).build();
    }

    @Test
    @DisplayName("SES-10 BND-1 issue 18.3: the peer listener's and channels' gRPC message bound is the one derived from the frame bounds, not gRPC's 4 MiB default")
    void inboundBoundDerivedFromFrameBounds() throws Exception {
        ManagerConfig config = ManagerConfig.from(new RawValues().put(Setting.CLUSTER, "c").put(Setting.NODE_ID, "n")
                .put(Setting.ETCD, "http://127.0.0.1:2379").put(Setting.FRAME_ENCODED_BYTES_MAX, "8MiB")
                .put(Setting.FRAME_DECODED_BYTES_MAX, "16MiB").put(Setting.RECEIVE_WINDOW_BYTES, "16MiB"));
        int bound = config.peerInboundMessageBytesMax();
        assertThat(bound).isEqualTo((8 << 20) + ManagerConfig.PEER_MESSAGE_MARGIN_BYTES);
        NativeTransport transport = NativeTransport.detect();
        PeerListener listener = PeerListener.start(new ListenAddress("127.0.0.1", 0), transport, Optional.empty(), bound);
        PeerChannels channels = new PeerChannels(transport, Optional.empty(), bound);
        ManagedChannel channel = channels.open(new Endpoint("127.0.0.1", listener.boundAddress().getPort()));
        try {
            listener.addService(PeerListenerTest::echo);
            byte[] frame = new byte[8 << 20]; // a legal 8 MiB frame: above gRPC's default 4 MiB
            assertThat(ClientCalls.blockingUnaryCall(channel, ECHO, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS),
                    frame)).hasSize(frame.length);
            assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(channel, ECHO,
                    CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), new byte[bound + 1]))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            channels.close();
            listener.close();
        }
    }

    @Test
    @DisplayName("OPS-5 issue 20.9: with peer TLS the listener and channels speak mutual TLS; a plaintext client, a client without a certificate and one from another CA are refused")
    void mutualTls(@TempDir Path dir) throws Exception {
        TestCerts certs = new TestCerts(dir);
        Path ca = certs.ca("cluster-ca");
        Path[] a = certs.leaf("node-a", "cluster-ca");
        Path[] b = certs.leaf("node-b", "cluster-ca");
        certs.ca("other-ca");
        Path[] stranger = certs.leaf("stranger", "other-ca");
        PeerTls tlsA = PeerTls.load(a[0], a[1], ca, new NodeId("node-a"));
        PeerTls tlsB = PeerTls.load(b[0], b[1], ca, new NodeId("node-b"));
        NativeTransport transport = NativeTransport.detect();
        PeerListener listener = PeerListener.start(new ListenAddress("127.0.0.1", 0), transport, Optional.of(tlsA), 1 << 20);
        listener.addService(PeerListenerTest::echo);
        Endpoint endpoint = new Endpoint("127.0.0.1", listener.boundAddress().getPort());
        List<PeerChannels> all = new ArrayList<>();
        try {
            PeerChannels fromB = new PeerChannels(transport, Optional.of(tlsB), 1 << 20);
            all.add(fromB);
            ManagedChannel ok = fromB.open(endpoint);
            assertThat(new String(call(ok, "over mTLS"))).isEqualTo("over mTLS");
            ok.shutdownNow();
            PeerChannels plaintext = new PeerChannels(transport, Optional.empty(), 1 << 20);
            all.add(plaintext);
            PeerChannels foreign = new PeerChannels(transport, Optional.of(PeerTls.load(stranger[0], stranger[1], ca,
                    new NodeId("stranger"))), 1 << 20);
            all.add(foreign);
            for (PeerChannels refused : List.of(plaintext, foreign)) {
                ManagedChannel ch = refused.open(endpoint);
                assertThatThrownBy(() -> call(ch, "refused")).isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
                ch.shutdownNow();
            }
            SSLContext noCert = SSLContext.getInstance("TLS");
            noCert.init(null, new TrustManager[] {trustAll()}, null);
            try (SSLSocket s = (SSLSocket) noCert.getSocketFactory().createSocket("127.0.0.1", endpoint.port())) {
                s.setSoTimeout(10_000);
                s.setEnabledProtocols(new String[] {"TLSv1.3"});
                s.setSSLParameters(alpnH2(s.getSSLParameters()));
                s.startHandshake();
                // TLS 1.3: the server's refusal of the missing client certificate arrives with the first read
                assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(IOException.class);
            }
        } finally {
            for (PeerChannels c : all) {
                c.close();
            }
            listener.close();
        }
    }

    /** Answers the node id the listener found in the caller's certificate ({@code PeerIdentity}), or "none". */
    private static ServerServiceDefinition whoAmI() {
        return ServerServiceDefinition.builder("orbitkv.test.Echo")
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((req, out) -> {
                    out.onNext(PeerIdentity.current().map(NodeId::value).orElse("none").getBytes());
                    out.onCompleted();
                })).build();
    }

    @Test
    @DisplayName("issue 33 any certificate from the cluster CA can pose as any member: the mTLS listener hands each call the node id its certificate names (URI SAN urn:orbitkv:node:<id>) and refuses a certificate naming none")
    void anyCertificateFromClusterCaCanPoseAsAnyMember(@TempDir Path dir) throws Exception {
        TestCerts certs = new TestCerts(dir);
        Path ca = certs.ca("cluster-ca");
        Path[] a = certs.leaf("node-a", "cluster-ca");
        Path[] b = certs.leaf("node-b", "cluster-ca");
        Path[] nameless = certs.leaf("nameless", "cluster-ca", null);
        NativeTransport transport = NativeTransport.detect();
        PeerListener listener = PeerListener.start(new ListenAddress("127.0.0.1", 0), transport,
                Optional.of(PeerTls.load(a[0], a[1], ca, new NodeId("node-a"))), 1 << 20);
        listener.addService(PeerListenerTest::whoAmI);
        Endpoint endpoint = new Endpoint("127.0.0.1", listener.boundAddress().getPort());
        PeerChannels fromB = new PeerChannels(transport, Optional.of(PeerTls.load(b[0], b[1], ca, new NodeId("node-b"))), 1 << 20);
        ManagedChannel noNode = io.grpc.netty.NettyChannelBuilder.forAddress("127.0.0.1", endpoint.port())
                .sslContext(io.grpc.netty.GrpcSslContexts.forClient().trustManager(ca.toFile())
                        .keyManager(nameless[0].toFile(), nameless[1].toFile()).build()).build();
        try {
            ManagedChannel ch = fromB.open(endpoint);
            assertThat(new String(call(ch, "?"))).as("the handlers see the caller's certified node id").isEqualTo("node-b");
            ch.shutdownNow();
            assertThatThrownBy(() -> call(noNode, "?")).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
                assertThat(e.getStatus().getDescription()).contains("urn:orbitkv:node:");
            });
        } finally {
            noNode.shutdownNow();
            fromB.close();
            listener.close();
        }
    }

    @Test
    @DisplayName("issue 33 a --peer-tls-cert-file that does not name --node-id refuses the start, naming both options")
    void certificateMustNameTheNodeId(@TempDir Path dir) throws Exception {
        TestCerts certs = new TestCerts(dir);
        Path ca = certs.ca("cluster-ca");
        Path[] other = certs.leaf("node-b", "cluster-ca");
        Path[] nameless = certs.leaf("nameless", "cluster-ca", null);
        assertThatThrownBy(() -> PeerTls.load(other[0], other[1], ca, new NodeId("node-a")))
                .isInstanceOf(orbitkv.server.config.ConfigException.class)
                .hasMessageContaining("--peer-tls-cert-file " + other[0]).hasMessageContaining("names node node-b")
                .hasMessageContaining("--node-id is node-a");
        assertThatThrownBy(() -> ManagerConfig.from(new RawValues().put(Setting.CLUSTER, "c").put(Setting.NODE_ID, "node-a")
                .put(Setting.ETCD, "http://127.0.0.1:2379").put(Setting.PEER_TLS_CERT_FILE, nameless[0].toString())
                .put(Setting.PEER_TLS_KEY_FILE, nameless[1].toString()).put(Setting.PEER_TLS_CA_FILE, ca.toString())))
                .isInstanceOf(orbitkv.server.config.ConfigException.class)
                .hasMessageContaining("--peer-tls-cert-file " + nameless[0] + " does not name --node-id node-a")
                .hasMessageContaining("urn:orbitkv:node:node-a");
    }

    private static javax.net.ssl.SSLParameters alpnH2(javax.net.ssl.SSLParameters p) {
        p.setApplicationProtocols(new String[] {"h2"});
        return p;
    }

    private static X509TrustManager trustAll() {
        return new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {}

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) {}

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        };
    }

    private static byte[] call(ManagedChannel channel, String text) {
        return ClientCalls.blockingUnaryCall(channel, ECHO, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
                text.getBytes());
    }
}
