package orbitkv.conformance.peer;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
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

    private AdversarialRequester(Endpoint target) {
        channel = NettyChannelBuilder.forAddress(target.host(), target.port()).usePlaintext().build();
    }

    public static AdversarialRequester connect(Endpoint target) {
        return new AdversarialRequester(target);
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
