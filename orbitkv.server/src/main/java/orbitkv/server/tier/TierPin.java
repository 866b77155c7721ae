package orbitkv.server.tier;

import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import orbitkv.inventory.Medium;
import orbitkv.inventory.StateKey;

/**
 * The pin lifecycle both tiers share: bytes are copied only while the pin is open, into a destination with
 * room for the whole block, and the pin is released exactly once however often {@link #close()} is called
 * (INV-9: a pin is bounded by its tier and owned until closed). Subclasses say only where the bytes live.
 */
abstract class TierPin implements PinnedBlock {
    private final AtomicBoolean open = new AtomicBoolean(true);
    private final StateKey key;
    private final Medium medium;
    private final long sizeBytes;

    TierPin(StateKey key, Medium medium, long sizeBytes) {
        this.key = key;
        this.medium = medium;
        this.sizeBytes = sizeBytes;
    }

    @Override
    public final Medium medium() {
        return medium;
    }

    @Override
    public final long sizeBytes() {
        return sizeBytes;
    }

    @Override
    public final void copyTo(ByteBuffer dst) {
        if (!open.get()) {
            throw new IllegalStateException("pin of " + key + " is closed");
        }
        if (dst.remaining() < sizeBytes) {
            throw new BufferOverflowException();
        }
        copyBytes(dst.slice(dst.position(), (int) sizeBytes));
        dst.position(dst.position() + (int) sizeBytes);
    }

    @Override
    public final void close() {
        if (open.compareAndSet(true, false)) {
            release();
        }
    }

    /** Fills {@code view}, which has exactly {@link #sizeBytes()} bytes remaining, with the block's bytes. */
    abstract void copyBytes(ByteBuffer view);

    /** Gives the pin back to its tier; called once. */
    abstract void release();
}
