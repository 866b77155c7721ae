package orbitkv.server.tier;

import java.nio.ByteBuffer;
import orbitkv.inventory.Medium;

/**
 * A block held against eviction and overwrite while it is read (INV-9: pins are bounded by the tier's
 * {@code pinsMax}). Closing releases the pin exactly once; a second close does nothing.
 */
public interface PinnedBlock extends AutoCloseable {
    Medium medium();

    /** The residency sequence of the pinned residence. */
    long sequence();

    long sizeBytes();

    /**
     * Copies the whole block into {@code dst} at its position and advances the position by
     * {@link #sizeBytes()}.
     *
     * @throws java.io.UncheckedIOException on an SSD read error
     * @throws java.nio.BufferOverflowException if {@code dst} has fewer bytes remaining than the block
     */
    void copyTo(ByteBuffer dst);

    @Override
    void close();
}
