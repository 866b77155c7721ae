package orbitkv.transfer.requester;

import java.lang.foreign.MemorySegment;

/**
 * Copies one chunk of a shared-memory READ. Production copies with {@link MemorySegment#copy}; tests decorate it
 * to inject faults (delay, stall, a truncated arena, a flipped byte) at the one place the bytes move.
 */
@FunctionalInterface
public interface ChunkCopier {
    ChunkCopier PLAIN = MemorySegment::copy;

    void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes);
}
