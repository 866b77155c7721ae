package orbitkv.transfer.requester;

import java.util.concurrent.CompletableFuture;
import orbitkv.membership.NodeId;
import orbitkv.transfer.ReadResult;

/**
 * An Authorize asked on the data channel (issue 37 item 5): the AuthorizeRequest bytes go out as an AUTHORIZE
 * frame, and the AuthorizeResponse bytes come back in order with the READ answers, bounded by
 * {@code answerBytesMax} before anything is allocated for them. Its outcome completes once: the answer's bytes, the
 * source's refusal of the frame (a source without it answers MALFORMED), or why the exchange stopped.
 */
final class DataAuthorize extends Exchange {
    /** How the exchange ended. */
    sealed interface Outcome {
        /** The source answered (the answer's CRC32C was checked, its size bounded before it was read). */
        record Answered(orbitkv.transfer.wire.AuthorizeResponse response) implements Outcome {}

        /** The source does not take AUTHORIZE frames (it answered MALFORMED): ask it over gRPC. */
        record Unsupported(String detail) implements Outcome {}

        /** The exchange stopped before an answer: connection lost or refused, timed out, protocol violation. */
        record Stopped(ReadResult why) implements Outcome {}
    }

    final byte[] request;
    final int answerBytesMax;
    private final NodeId source;
    private final CompletableFuture<Outcome> outcome = new CompletableFuture<>();

    DataAuthorize(byte[] request, int answerBytesMax, NodeId source, long admittedNanos, long deadlineNanos,
            long requestId) {
        super(0, admittedNanos, deadlineNanos, requestId);
        this.request = request;
        this.answerBytesMax = answerBytesMax;
        this.source = source;
    }

    CompletableFuture<Outcome> outcome() {
        return outcome;
    }

    void answered(Outcome o) {
        outcome.complete(o);
    }

    @Override
    NodeId sourceNode() {
        return source;
    }

    @Override
    void finish(ReadResult o) {
        outcome.complete(new Outcome.Stopped(o));
    }

    @Override
    boolean cancelRequested() {
        return false; // an Authorize is not cancelled: its deadline ends it
    }

    @Override
    void onCancel(Runnable stopper) {}
}
