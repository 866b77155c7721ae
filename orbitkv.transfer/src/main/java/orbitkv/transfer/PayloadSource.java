package orbitkv.transfer;

import java.nio.ByteBuffer;
import java.util.Objects;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;

/**
 * SPI implemented by the owner of payload bytes (the Manager's tiers): validate the exact residence
 * generation and pin its bytes until released (INV-2, INV-3). Pins are bounded by the implementation;
 * running out is the explicit {@link PinResult.PinLimit} refusal (INV-9), never a wait.
 */
public interface PayloadSource {
    /**
     * Pins the bytes of {@code (key, medium)} iff its current residency sequence is exactly
     * {@code residencySequence}.
     */
    PinResult pin(StateKey key, Medium medium, long residencySequence);

    /** The outcome of {@link #pin}. */
    sealed interface PinResult {
        /** Pinned: the bytes stay valid until {@link Pinned#release()}; release exactly once. */
        non-sealed interface Pinned extends PinResult {
            long residencySequence();

            /** A read-only view of the pinned payload. */
            ByteBuffer payload();

            void release();
        }

        /** The residence exists at another generation: the requester's evidence is stale. */
        record StaleGeneration(long currentSequence) implements PinResult {}

        /** No such residence. */
        record NotResident() implements PinResult {}

        /** The bounded pin table is full. */
        record PinLimit(int pinsMax) implements PinResult {
            public PinLimit {
                if (pinsMax < 0) {
                    throw new IllegalArgumentException("pinsMax must be >= 0, got " + pinsMax);
                }
            }
        }
    }

    /** Convenience for callers that require a pin. */
    static PinResult.Pinned requirePinned(PinResult result) {
        Objects.requireNonNull(result, "pin result");
        if (result instanceof PinResult.Pinned p) {
            return p;
        }
        throw new IllegalStateException("payload not pinned: " + result);
    }
}
