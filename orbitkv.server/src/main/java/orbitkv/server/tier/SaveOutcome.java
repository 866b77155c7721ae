package orbitkv.server.tier;

import java.util.Objects;
import orbitkv.inventory.Medium;

/** The outcome of storing one block in a tier: stored with its residency sequence, or an explicit refusal. */
public sealed interface SaveOutcome {
    /**
     * The block is resident.
     *
     * @param medium where it is resident
     * @param sequence residency sequence from the {@link ResidencyListener} ({@code 0} if it assigned none)
     * @param sizeBytes payload size
     */
    record Stored(Medium medium, long sequence, long sizeBytes) implements SaveOutcome {
        public Stored {
            Objects.requireNonNull(medium, "medium");
            if (sequence < 0 || sizeBytes < 0) {
                throw new IllegalArgumentException("sequence and size must be >= 0: " + sequence + ", " + sizeBytes);
            }
        }
    }

    /**
     * Nothing was stored.
     *
     * @param reason the named refusal
     * @param message detail naming the bound
     */
    record Refused(TierRefusal reason, String message) implements SaveOutcome {
        public Refused {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(message, "message");
        }
    }
}
