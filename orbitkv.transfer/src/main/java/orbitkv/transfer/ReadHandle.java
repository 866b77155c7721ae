package orbitkv.transfer;

import java.util.concurrent.CompletionStage;

/** One admitted (or refused) READ. */
public interface ReadHandle {
    /**
     * Completes once with the READ's terminal outcome, after the READ physically stopped. Completed on the
     * engine's I/O thread (TCP) or its copy thread (shared memory): dependants must not block.
     */
    CompletionStage<ReadResult> outcome();

    /**
     * Asks the READ to stop. The outcome is {@link ReadResult.Cancelled} unless it already terminated
     * otherwise; either way it is delivered only after the READ stopped. Idempotent.
     */
    void cancel();
}
