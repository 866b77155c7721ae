package orbitkv.transfer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import orbitkv.transfer.FaultProxy.Fault;
import orbitkv.transfer.requester.ChunkCopier;

/**
 * The shared-memory side of the suite's fault decorator: wraps the chunk copy of a shared-memory READ. The next
 * READ after {@link #arm} gets the fault: DELAY waits before its first chunk, CUT truncates the source's arena
 * file after the first chunk so the next chunk's copy faults for real (SIGBUS, reported by the JVM as an
 * InternalError), STALL blocks in the first chunk until {@link #resume()} (bounded), CORRUPT flips the byte in
 * the middle of the first chunk it copied.
 */
public final class FaultCopier implements ChunkCopier {
    private final Path arenaFile;
    private volatile Fault armed = Fault.NONE;
    private volatile Duration delay = Duration.ZERO;
    private final CountDownLatch stalled = new CountDownLatch(1);
    private final CountDownLatch resume = new CountDownLatch(1);
    private Fault current = Fault.NONE;
    private int chunks;

    public FaultCopier(Path arenaFile) {
        this.arenaFile = arenaFile;
    }

    public void arm(Fault fault, Duration d) {
        this.delay = d;
        this.armed = fault;
    }

    /** True once a STALL fault is blocking a copy. */
    public boolean stalled() {
        return stalled.getCount() == 0;
    }

    public void resume() {
        resume.countDown();
    }

    @Override
    public void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
        if (dstOffset == 0) { // the first chunk of a READ takes the armed fault
            current = armed;
            armed = Fault.NONE;
            chunks = 0;
        }
        chunks++;
        switch (current) {
            case DELAY -> {
                if (chunks == 1) {
                    pause(delay);
                }
            }
            case STALL -> {
                if (chunks == 1) {
                    stalled.countDown();
                    try {
                        if (!resume.await(30, TimeUnit.SECONDS)) {
                            throw new AssertionError("the test never resumed a stalled copy");
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
            case CUT -> {
                if (chunks == 2) {
                    try (FileChannel ch = FileChannel.open(arenaFile, StandardOpenOption.WRITE)) {
                        ch.truncate(0); // the source's arena vanishes under the mapping
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
            }
            default -> { }
        }
        MemorySegment.copy(src, srcOffset, dst, dstOffset, bytes);
        if (current == Fault.CORRUPT && chunks == 1) {
            long i = dstOffset + bytes / 2;
            dst.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (dst.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i) ^ 0x5A));
        }
    }

    private static void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis()); // the injected fault itself, not synchronization
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
