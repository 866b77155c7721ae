package orbitkv.transfer;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Requester-owned memory a READ fills (DESIGN §8): the READ writes the block's bytes at offset 0 of
 * {@link #segment()}. The requester keeps ownership throughout; the engine writes into it only between the
 * READ's admission and its physical termination, and never after its outcome is delivered.
 *
 * <p>Exposure: after {@link ReadOutcome.Completed} the first {@code lengthBytes} bytes are exactly the verified
 * block. After any other outcome nothing partial is exposed: a refused READ never wrote, and a failed,
 * timed-out or cancelled READ's range is zero-filled after the READ physically stopped.
 *
 * <p>A native segment (off-heap, e.g. an arena or direct buffer) is filled by the socket directly; a heap
 * segment costs one extra copy on the TCP backend.
 *
 * @param segment writable memory of at least the block's length
 */
public record Destination(MemorySegment segment) {
    public Destination {
        Objects.requireNonNull(segment, "segment");
        if (segment.isReadOnly()) {
            throw new IllegalArgumentException("a destination must be writable");
        }
    }

    /** The memory of {@code buffer} from 0 to its capacity (position and limit are ignored). */
    public static Destination of(ByteBuffer buffer) {
        return new Destination(MemorySegment.ofBuffer(buffer.duplicate().clear()));
    }

    public static Destination of(MemorySegment segment) {
        return new Destination(segment);
    }

    public long capacityBytes() {
        return segment.byteSize();
    }
}
