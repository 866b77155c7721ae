package orbitkv.server.tier;

import java.util.Objects;

/**
 * A tier could not store bytes it had room for: its storage failed under the write (issue 33; e.g.
 * {@link TierRefusal#BACKING_STORE_FULL}). The refusal is counted and logged by the tier; nothing of the save is
 * stored once the caller aborts it.
 */
public final class TierWriteFailed extends RuntimeException {
    private final SaveOutcome.Refused refusal;

    TierWriteFailed(SaveOutcome.Refused refusal, Throwable cause) {
        super(refusal.message(), cause);
        this.refusal = Objects.requireNonNull(refusal, "refusal");
    }

    public SaveOutcome.Refused refusal() {
        return refusal;
    }
}
