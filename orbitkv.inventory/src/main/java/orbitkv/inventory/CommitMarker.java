package orbitkv.inventory;

import java.util.Objects;

/**
 * The source's claim that a snapshot is complete (wire {@code SnapshotCommit}). A marker alone proves
 * nothing: the receiver validates every field against what it actually staged (SNAP-7).
 *
 * @param s1 the journal sequence captured after the last page; the view installs at it (SNAP-3, SNAP-5)
 * @param pageCount number of pages sent, ordinals {@code 1..pageCount}
 * @param firstFrame frame number of the snapshot begin
 * @param lastFrame frame number of the last page or replay delta before the commit
 * @param maxScannedSequence the highest record sequence among the pages, {@code <= s1}
 * @param transcriptDigest the running digest over the transcript (SES-11)
 */
public record CommitMarker(long s1, long pageCount, long firstFrame, long lastFrame, long maxScannedSequence,
        TranscriptDigest transcriptDigest) {
    public CommitMarker {
        if (s1 < 0) {
            throw new IllegalArgumentException("commit s1 must be >= 0, got " + s1);
        }
        if (pageCount < 0) {
            throw new IllegalArgumentException("commit page count must be >= 0, got " + pageCount);
        }
        if (firstFrame < 1) {
            throw new IllegalArgumentException("commit first frame must be >= 1, got " + firstFrame);
        }
        if (lastFrame < firstFrame) {
            throw new IllegalArgumentException(
                    "commit last frame (" + lastFrame + ") must be >= first frame (" + firstFrame + ")");
        }
        if (maxScannedSequence < 0 || maxScannedSequence > s1) {
            throw new IllegalArgumentException(
                    "commit max scanned sequence must be in 0..s1 (" + s1 + "), got " + maxScannedSequence);
        }
        Objects.requireNonNull(transcriptDigest, "commit transcript digest must not be null");
    }
}
