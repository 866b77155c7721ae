package orbitkv.transfer;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Requester-owned memory a READ fills (DESIGN §8): the READ writes the block's bytes at offset 0 of
 * {@link #segment()}. The requester keeps ownership throughout; the engine writes into it only between the
 * READ's admission and its physical termination, and never after its outcome is delivered.
 *
 * <p>Exposure: after {@link ReadResult.Completed} the first {@code lengthBytes} bytes are exactly the verified
 * block. After any other outcome nothing partial is exposed: a refused READ never wrote, and a failed,
 * timed-out or cancelled READ's range is zero-filled after the READ physically stopped.
 *
 * <p>A native segment (off-heap, e.g. an arena or direct buffer) is filled by the socket directly; a heap
 * segment costs one extra copy on the TCP backend.
 *
 * <p>The engine fills the destination on its own threads, so its memory must be accessible from any thread: a
 * shared, global or automatic arena, a heap array or a buffer; a confined arena's segment is refused.
 *
 * @param segment writable memory of at least the block's length, accessible from any thread
 */
public record Destination(MemorySegment segment) {
    /** A thread that is never the owner of a confined arena: a segment it may access is accessible by all. */
    private static final Thread PROBE = new Thread(() -> {}, "orbitkv-destination-probe");

    public Destination {
        Objects.requireNonNull(segment, "segment");
        if (segment.isReadOnly()) {
            throw new IllegalArgumentException("a destination must be writable");
        }
        if (!segment.isAccessibleBy(PROBE)) {
            throw new IllegalArgumentException("a destination must be accessible from any thread (the engine fills it"
                    + " on its I/O threads); a confined arena's segment is not");
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
