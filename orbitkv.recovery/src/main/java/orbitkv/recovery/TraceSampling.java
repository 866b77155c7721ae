package orbitkv.recovery;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The sampled route-trace file: one JSON object per line, every {@code sampleEvery}-th restore, bounded in bytes
 * and lines; beyond a bound further traces are refused and counted, never silently dropped (the file is not
 * rotated). The directory must lie outside any git checkout (checked at start: the design keeps detailed traces
 * outside the checkout).
 *
 * @param directory where the file is created ({@code java.io.tmpdir} by default)
 * @param sampleEvery 0 = off, else write every n-th restore's trace
 * @param fileBytesMax bound on the file's size
 * @param fileLinesMax bound on the file's lines
 */
public record TraceSampling(Path directory, int sampleEvery, long fileBytesMax, int fileLinesMax) {
    /** Off. */
    public static final int SAMPLE_EVERY_DEFAULT = 0;
    /** 16 MiB. */
    public static final long FILE_BYTES_MAX_DEFAULT = 16L << 20;
    /** 100,000 lines. */
    public static final int FILE_LINES_MAX_DEFAULT = 100_000;

    public TraceSampling {
        Objects.requireNonNull(directory, "directory");
        if (sampleEvery < 0 || sampleEvery > 1_000_000) {
            throw new IllegalArgumentException("sampleEvery must be in [0, 1000000], got " + sampleEvery);
        }
        if (fileBytesMax < 1024 || fileBytesMax > (1L << 30)) {
            throw new IllegalArgumentException("fileBytesMax must be in [1 KiB, 1 GiB], got " + fileBytesMax);
        }
        if (fileLinesMax < 1 || fileLinesMax > 10_000_000) {
            throw new IllegalArgumentException("fileLinesMax must be in [1, 10000000], got " + fileLinesMax);
        }
    }

    /** No file. */
    public static TraceSampling off() {
        return new TraceSampling(Path.of(System.getProperty("java.io.tmpdir")), 0, FILE_BYTES_MAX_DEFAULT, FILE_LINES_MAX_DEFAULT);
    }

    /** Every {@code n}-th trace into {@code java.io.tmpdir}, default bounds. */
    public static TraceSampling every(int n) {
        return off().withSampleEvery(n);
    }

    public TraceSampling withSampleEvery(int n) {
        return new TraceSampling(directory, n, fileBytesMax, fileLinesMax);
    }

    public TraceSampling withDirectory(Path dir) {
        return new TraceSampling(dir, sampleEvery, fileBytesMax, fileLinesMax);
    }

    public TraceSampling withBounds(long bytesMax, int linesMax) {
        return new TraceSampling(directory, sampleEvery, bytesMax, linesMax);
    }

    public boolean enabled() {
        return sampleEvery > 0;
    }
}
