package orbitkv.transfer;

import java.util.Objects;

/** The outcome of {@link TransferEngine#release}: sent only after every READ of the grant terminated. */
public sealed interface ReleaseOutcome {
    /** The source ended the grant now. */
    record Released() implements ReleaseOutcome {}

    /**
     * The source no longer knew it (it expired, the requester was excluded, or, with release after the last READ, the
     * source ended it when its last block's send completed although this side's READ of it then failed): its pins
     * were already gone.
     */
    record AlreadyEnded() implements ReleaseOutcome {}

    /**
     * The Release call failed or was refused; the grant's pins stay until its expiry, their terminal owner.
     *
     * @param detail what happened
     */
    record NotConfirmed(String detail) implements ReleaseOutcome {
        public NotConfirmed {
            Objects.requireNonNull(detail, "detail");
        }
    }
}
