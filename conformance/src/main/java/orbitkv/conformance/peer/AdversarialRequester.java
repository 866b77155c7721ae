package orbitkv.conformance.peer;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.netty.handler.ssl.SslContext;
import javax.net.ssl.SSLException;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.membership.Endpoint;

/**
 * A test-owned v4 requester speaking the wire contract directly: it opens raw sessions to the source under
 * test and sends crafted Opens, ACKs (duplicate, fabricated), frames of other sessions, garbage bytes.
 * Point it at any implementation's peer endpoint.
 */
@SuppressWarnings("try") // close() waits for the transport to terminate, so it may be interrupted
public final class AdversarialRequester implements AutoCloseable {
    private final ManagedChannel channel;

    private AdversarialRequester(ManagedChannel channel) {
        this.channel = channel;
    }

    /** A plaintext channel to {@code target}'s peer listener. */
    public static AdversarialRequester connect(Endpoint target) {
        return new AdversarialRequester(NettyChannelBuilder.forAddress(target.host(), target.port()).usePlaintext().build());
    }

    /**
     * A mutual-TLS channel to {@code target}'s peer listener presenting {@code tls}'s certificate: under peer TLS
     * the target admits only Opens whose requester is the node that certificate names (issue 33).
     *
     * @throws IllegalArgumentException naming the files when they do not load
     */
    public static AdversarialRequester connect(Endpoint target, PeerTlsFiles tls) {
        SslContext ctx;
        try {
            ctx = tls.clientContext();
        } catch (SSLException | RuntimeException e) {
            throw new IllegalArgumentException("peer TLS: cannot load " + tls + ": " + e.getMessage(), e);
        }
        return new AdversarialRequester(NettyChannelBuilder.forAddress(target.host(), target.port()).sslContext(ctx).build());
    }

    /** A new raw stream; nothing is sent yet. */
    public Session open() {
        Session s = new Session();
        s.bind(ClientCalls.asyncBidiStreamingCall(channel.newCall(RawBytes.METHOD, CallOptions.DEFAULT), s.inbound()));
        return s;
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    /** One raw stream to the source under test. */
    public static final class Session extends Conversation<SourceFrame> {
        Session() {
            super(parsing(SourceFrame::parseFrom));
        }
    }
}
