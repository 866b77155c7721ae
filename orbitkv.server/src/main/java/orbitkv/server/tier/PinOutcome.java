package orbitkv.server.tier;

import java.util.Objects;

/** The outcome of pinning a block for reading. */
public sealed interface PinOutcome {
    /** The block is pinned; the caller must close it. */
    record Pinned(PinnedBlock block) implements PinOutcome {
        public Pinned {
            Objects.requireNonNull(block, "block");
        }
    }

    /** The key is not resident in this tier. */
    record NotResident() implements PinOutcome {}

    /** The key may be resident, but the read was refused (for example {@link TierRefusal#PINS_EXHAUSTED}). */
    record Refused(TierRefusal reason, String message) implements PinOutcome {
        public Refused {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(message, "message");
        }
    }
}
