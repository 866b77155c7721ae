package orbitkv.inventory.session;

import io.grpc.ClientStreamTracer;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.Optional;
import java.util.UUID;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One gRPC call of a {@link RequesterSession} (issue 38): moves its messages, arrivals and end to the session's core. */
final class RequesterCall implements StreamObserver<Inbound<SourceFrame>> {
    private static final Logger LOG = LoggerFactory.getLogger(RequesterCall.class);

    private final RequesterSession session;
    final UUID id;
    /** Guarded by the session's core monitor. */
    StreamObserver<RequesterFrame> requests;

    RequesterCall(RequesterSession session, UUID id) {
        this.session = session;
        this.id = id;
    }

    /** A message's bytes as they arrive (gRPC's deframer): a receiving stream is not silent. */
    ClientStreamTracer.Factory tracer() {
        return new ClientStreamTracer.Factory() {
            @Override
            public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
                return new ClientStreamTracer() {
                    @Override
                    public void inboundMessage(int seqNo) {
                        session.onArrival(id);
                    }

                    @Override
                    public void inboundWireSize(long bytes) {
                        session.onArrival(id);
                    }
                };
            }
        };
    }

    void send(RequesterFrame f) {
        try {
            requests.onNext(f);
        } catch (RuntimeException e) { // the call already ended: its end reaches the core through onError
            LOG.trace("frame not delivered", e);
        }
    }

    void close(Optional<Refusal> error) {
        try {
            error.ifPresent(r -> requests.onNext(RequesterFrame.newBuilder().setSessionId(Wire.uuid(id))
                    .setError(Wire.error(r.cause(), r.detail())).build()));
            requests.onCompleted();
        } catch (RuntimeException e) { // the call already ended: the source learns it from the transport
            LOG.trace("error frame not delivered", e);
        }
    }

    @Override
    public void onNext(Inbound<SourceFrame> in) {
        session.onMessage(id, in);
    }

    @Override
    public void onError(Throwable t) {
        session.onEnd(id, Optional.of(Status.fromThrowable(t).getCode()));
    }

    @Override
    public void onCompleted() {
        session.onEnd(id, Optional.empty());
    }
}
