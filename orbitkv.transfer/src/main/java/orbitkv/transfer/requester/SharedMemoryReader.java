package orbitkv.transfer.requester;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongSupplier;
import java.util.zip.CRC32C;
import orbitkv.transfer.ReadFailure;
import orbitkv.transfer.ReadResult;

/**
 * The same-host backend (docs/transfer.md "Shared memory"): copies a granted block from the source's arena,
 * mapped read-only, into the destination in chunks of {@code sharedMemoryChunkBytes}, checksumming each chunk
 * right after it is copied (while it is in cache), on the engine's one copy thread (copies are bound by memory
 * bandwidth, not by threads; the queue is bounded by {@code readsInFlightMax}). Between chunks it checks
 * cancellation and the READ's deadline; after the copy it checks that the grant's local deadline has not
 * passed (before it the source's pin held the bytes: a copy that ends later is not trusted, whatever its
 * checksum says), then the CRC32C.
 */
final class SharedMemoryReader {
    private final int chunkBytes;
    private final LongSupplier clock;
    private final ChunkCopier copier;
    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "orbitkv-transfer-shm-copy");
        t.setDaemon(true);
        return t;
    });

    SharedMemoryReader(int chunkBytes, LongSupplier clock, ChunkCopier copier) {
        this.chunkBytes = chunkBytes;
        this.clock = clock;
        this.copier = copier;
    }

    /** Runs {@code read} to its terminal outcome; the mapping is released before the outcome is delivered. */
    void run(Read read, SharedArenas arenas, SharedArenas.Mapping mapping) {
        try {
            thread.execute(() -> {
                ReadResult o;
                long started = clock.getAsLong();
                try {
                    o = copy(read, mapping);
                } finally {
                    arenas.release(mapping);
                }
                DataExchangeEvent.recordCopy(read, started, clock, o);
                read.finish(o);
            });
        } catch (RejectedExecutionException e) {
            arenas.release(mapping);
            read.finish(new ReadResult.Refused(orbitkv.transfer.ReadRefusal.ENGINE_CLOSED, "the engine is closed"));
        }
    }

    /** Lets queued copies finish (each stops at its deadline); accepts no more. */
    void close() {
        thread.shutdown();
    }

    private ReadResult copy(Read read, SharedArenas.Mapping mapping) {
        long offset = read.grant.arenaOffsets[read.index];
        if (offset < 0 || offset + read.length > mapping.segment.byteSize()) {
            return new ReadResult.Failed(ReadFailure.SHARED_MEMORY_FAULT, "block at " + offset + " + " + read.length
                    + " lies outside the mapped arena of " + mapping.segment.byteSize() + " bytes");
        }
        CRC32C crc = new CRC32C();
        try {
            for (long done = 0; done < read.length; ) {
                if (read.cancelRequested()) {
                    return new ReadResult.Cancelled();
                }
                long now = clock.getAsLong();
                if (now - read.deadlineNanos >= 0) {
                    return new ReadResult.TimedOut(now - read.admittedNanos);
                }
                long n = Math.min(chunkBytes, read.length - done);
                copier.copy(mapping.segment, offset + done, read.destination.segment(), done, n);
                crc.update(read.destination.segment().asSlice(done, n).asByteBuffer());
                done += n;
            }
        } catch (InternalError | IllegalStateException | IndexOutOfBoundsException e) {
            // InternalError: the JVM's report of SIGBUS on a mapped file that shrank under the copy.
            return new ReadResult.Failed(ReadFailure.SHARED_MEMORY_FAULT, "copy from " + mapping.ref.path() + " faulted: " + e);
        }
        long now = clock.getAsLong();
        if (now - read.grant.localDeadlineNanos() >= 0) {
            return new ReadResult.Failed(ReadFailure.GRANT_EXPIRED_DURING_READ,
                    "the copy ended after the grant's local deadline; its pin may be gone");
        }
        if ((int) crc.getValue() != read.crc32c) {
            return new ReadResult.Failed(ReadFailure.CHECKSUM_MISMATCH, String.format(
                    "CRC32C %08x, the grant says %08x", (int) crc.getValue(), read.crc32c));
        }
        return new ReadResult.Completed(read.backend, read.route, read.length, now - read.admittedNanos, read.fallback);
    }
}
