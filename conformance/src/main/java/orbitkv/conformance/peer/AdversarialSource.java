package orbitkv.conformance.peer;

import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.wire.InventorySessionGrpc;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.membership.Endpoint;

/**
 * A test-owned v4 source speaking the wire contract directly (DESIGN §10): it accepts sessions from the
 * requester under test and lets a test script every source frame, including crafted, duplicate, gapped,
 * oversized and malformed ones. Point any implementation's requester at {@link #endpoint()}.
 */
@SuppressWarnings("try") // close() waits for the transport to terminate, so it may be interrupted
public final class AdversarialSource implements AutoCloseable {
    private final Server server;
    private final String host;
    private final BlockingQueue<ScriptedSession> accepted = new ArrayBlockingQueue<>(256);

    private AdversarialSource(InetSocketAddress bind, PeerTlsFiles tls) throws IOException {
        ServerServiceDefinition def = ServerServiceDefinition.builder(InventorySessionGrpc.SERVICE_NAME)
                .addMethod(RawBytes.METHOD, ServerCalls.asyncBidiStreamingCall(out -> {
                    ScriptedSession s = new ScriptedSession();
                    s.bind(out);
                    if (!accepted.offer(s)) {
                        throw new IllegalStateException("adversarial source: 256 unclaimed sessions");
                    }
                    return s.inbound();
                })).build();
        NettyServerBuilder builder = NettyServerBuilder.forAddress(bind).addService(def);
        if (tls != null) {
            builder.sslContext(tls.serverContext());
        }
        server = builder.build().start();
        host = bind.getHostString();
    }

    /** Starts on a free loopback port. */
    public static AdversarialSource start() throws IOException {
        return start(new InetSocketAddress("127.0.0.1", 0));
    }

    /** Starts on {@code bind} (port 0 picks a free one), e.g. the address a conformance run is told to use. */
    public static AdversarialSource start(InetSocketAddress bind) throws IOException {
        return new AdversarialSource(bind, null);
    }

    /**
     * Starts on {@code bind} over mutual TLS: presents {@code tls}'s certificate and requires the requester under
     * test to present one signed by its CA (as a Manager's peer listener does under peer TLS).
     *
     * @throws IOException when the port cannot be bound or the files do not load ({@link javax.net.ssl.SSLException})
     */
    public static AdversarialSource start(InetSocketAddress bind, PeerTlsFiles tls) throws IOException {
        return new AdversarialSource(bind, java.util.Objects.requireNonNull(tls, "tls"));
    }

    /** The bound host and port (the port chosen when 0 was asked for). */
    public Endpoint endpoint() {
        return new Endpoint(host, server.getPort());
    }

    /** The next session the requester under test opened, or null within {@code timeout}. */
    public ScriptedSession nextSession(Duration timeout) throws InterruptedException {
        return accepted.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    /** One session from the requester under test. */
    public static final class ScriptedSession extends Conversation<RequesterFrame> {
        ScriptedSession() {
            super(parsing(RequesterFrame::parseFrom));
        }
    }
}
